// Tests: the account page lists the user's sessions and ends one, or all at once, on the server side.
import Foundation
import HTTPTypes
@testable import KeywardServer
import XCTest

/// The account page lists where the user is signed in; a session can be ended from another browser, and
/// "sign out everywhere" ends them all at once — server-side, so an ended session stops on its next request.
final class AccountSessionsTests: XCTestCase {
    func testTheAccountPageListsSessionsAndEndsOneOrAll() async throws {
        try await TestServer.forEachEngine { server, client in
            let laptop = TestBrowser(client)
            let phone = TestBrowser(client)
            _ = try await laptop.signIn()
            _ = try await phone.signIn()
            let account = try await laptop.get("/realms/demo/account")
            XCTAssertEqual(account.status, .ok)
            XCTAssertTrue(account.contains("This browser"), account.html)
            XCTAssertEqual(account.html.components(separatedBy: "<td>Password</td>").count - 1, 2, "both sessions listed")
            XCTAssertEqual(account.html.components(separatedBy: ">End</button>").count - 1, 1, "only the other one can be ended from here")

            let csrf = try XCTUnwrap(account.field("csrf"))
            let action = try XCTUnwrap(account.capture(#"action="(/realms/demo/account/sessions/[^"]+/end)""#))
            let forged = try await laptop.post(action, ["csrf": "wrong"])
            XCTAssertEqual(forged.status, .forbidden)
            let stillIn = try await phone.get("/realms/demo/account")
            XCTAssertEqual(stillIn.status, .ok)

            let ended = try await laptop.post(action, ["csrf": csrf])
            XCTAssertEqual(ended.location, "/realms/demo/account?notice=session-ended")
            let phoneAfter = try await phone.get("/realms/demo/account")
            XCTAssertEqual(phoneAfter.status, .seeOther, "the phone's session ended")
            let page1 = try await laptop.get("/realms/demo/account")
            XCTAssertEqual(page1.status, .ok, "the laptop's did not")

            // Somebody else's session id is not this user's to end.
            let other = TestBrowser(client)
            _ = try await server.runtime.accounts.users.createUser(realm: "demo", username: "eve", password: "eve-password-1")
            _ = try await other.signIn(username: "eve", password: "eve-password-1")
            let eve = try await server.runtime.accounts.users.user(realm: "demo", username: "eve")
            let eveSessions = try await server.runtime.accounts.browserSessions.sessions(realm: "demo", userId: try XCTUnwrap(eve).id)
            let eveSession = try XCTUnwrap(eveSessions.first)
            let foreign = try await laptop.post("/realms/demo/account/sessions/\(eveSession.idHash)/end", ["csrf": csrf])
            XCTAssertEqual(foreign.location, "/realms/demo/account?notice=session-gone")
            let page2 = try await other.get("/realms/demo/account")
            XCTAssertEqual(page2.status, .ok, "eve is still signed in")

            _ = try await phone.signIn()
            let everywhere = try await laptop.post("/realms/demo/account/sessions/end-all", ["csrf": csrf])
            XCTAssertEqual(everywhere.location, "/realms/demo/login?notice=logged-out")
            let page3 = try await phone.get("/realms/demo/account")
            XCTAssertEqual(page3.status, .seeOther)
            let page4 = try await laptop.get("/realms/demo/account")
            XCTAssertEqual(page4.status, .seeOther)
            let page5 = try await other.get("/realms/demo/account")
            XCTAssertEqual(page5.status, .ok, "another user's sessions stay")
            let events = try await server.runtime.audit.events(realm: "demo", limit: 50)
            XCTAssertTrue(events.contains { $0.type == .sessionEnded })
            XCTAssertTrue(events.contains { $0.type == .sessionsEndedEverywhere })
        }
    }

    func testBrowserNamesAndSignInMethodsAreReadable() {
        XCTAssertEqual(AccountSessions.browserName("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"), "Firefox on Linux")
        XCTAssertEqual(AccountSessions.browserName("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile/15E148 Safari/604.1"), "Safari on iPhone")
        XCTAssertEqual(AccountSessions.browserName(nil), "Unknown browser")
        XCTAssertEqual(AccountSessions.signInMethod(["fed", "mfa"]), "Identity provider + phone")
        XCTAssertEqual(AccountSessions.signInMethod(["pwd"]), "Password")
    }
}
