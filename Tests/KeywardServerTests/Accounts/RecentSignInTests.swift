// Tests: ending other sessions, unlinking a provider, and adding or removing a phone all ask for a recent sign-in.
import Foundation
@testable import KeywardServer
import XCTest

/// What changes how an account is reached asks for a sign-in within `BrowserSession.recentSignIn`, as linking a
/// provider and deleting the account do: ending other browsers' sessions and unlinking a provider (security review
/// two). A stale session is sent to sign in again and nothing changes.
final class RecentSignInTests: XCTestCase {
    func testEndingOtherSessionsAndUnlinkingAskForARecentSignIn() async throws {
        try await TestServer.forEachEngine { server, client in
            let users = server.runtime.accounts.users
            let test = try await XCTUnwrapAsync(try await users.user(realm: "demo", username: "test"))
            let details = ExternalIdentity.ProviderDetails(alias: "corp", email: "test@example.test", emailVerified: true, name: "Test")
            try await users.linkProvider(realm: "demo", userId: test.id, issuer: "https://corp.example.test", subject: "t-1", details: details, trustEmail: false)

            let laptop = TestBrowser(client)
            let phone = TestBrowser(client)
            _ = try await laptop.signIn()
            _ = try await phone.signIn()
            let account = try await laptop.get("/realms/demo/account")
            let csrf = try XCTUnwrap(account.field("csrf"))
            let endPhone = try XCTUnwrap(account.capture(#"action="(/realms/demo/account/sessions/[^"]+/end)""#))
            server.clock.advance(by: BrowserSession.recentSignIn + 60)

            let reauth = "/realms/demo/login?reauth=1&return_to=/realms/demo/account"
            let ended = try await laptop.post(endPhone, ["csrf": csrf])
            XCTAssertEqual(ended.location, reauth, "ending another browser's session")
            let everywhere = try await laptop.post("/realms/demo/account/sessions/end-all", ["csrf": csrf])
            XCTAssertEqual(everywhere.location, reauth, "signing out everywhere")
            let unlinked = try await laptop.post("/realms/demo/account/identities/unlink", [
                "csrf": csrf, "issuer": "https://corp.example.test", "subject": "t-1",
            ])
            XCTAssertEqual(unlinked.location, reauth, "unlinking a provider")
            let phoneStill = try await phone.get("/realms/demo/account")
            XCTAssertEqual(phoneStill.status, .ok, "the phone's session is still there")
            let identities = try await users.identities(realm: "demo", userId: test.id).filter { $0.kind == .provider }
            XCTAssertEqual(identities.count, 1, "the provider is still linked")

            let again = try await laptop.signIn(query: "?reauth=1&return_to=/realms/demo/account")
            XCTAssertEqual(again.location, "/realms/demo/account")
            let fresh = try await laptop.get("/realms/demo/account")
            let freshCSRF = try XCTUnwrap(fresh.field("csrf"))
            let nowUnlinked = try await laptop.post("/realms/demo/account/identities/unlink", [
                "csrf": freshCSRF, "issuer": "https://corp.example.test", "subject": "t-1",
            ])
            XCTAssertEqual(nowUnlinked.location, "/realms/demo/account?notice=unlinked", "after signing in again")
            let nowEnded = try await laptop.post("/realms/demo/account/sessions/end-all", ["csrf": freshCSRF])
            XCTAssertEqual(nowEnded.location, "/realms/demo/login?notice=logged-out")
            let phoneAfter = try await phone.get("/realms/demo/account")
            XCTAssertEqual(phoneAfter.status, .seeOther, "the phone's session ended")
        }
    }

    /// Adding a second factor or taking one away changes how the account is reached too: from the account page, a
    /// stale session is sent to sign in again before it may enroll another phone or remove one. Ending this browser's
    /// own session needs no recent sign-in.
    func testAddingOrRemovingAPhoneAsksForARecentSignInAndSigningOutDoesNot() async throws {
        try await TestServer.forEachEngine { server, client in
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            let page = try await browser.get("/realms/demo/account/enroll")
            XCTAssertEqual(page.status, .ok)
            let link = try XCTUnwrap(page.capture(#"href="(my-secure://enroll\?token=[^"]+)""#) ?? page.capture(#"(my-secure://enroll\?token=[^"<]+)"#))
            let token = try XCTUnwrap(link.components(separatedBy: "token=").last?.removingPercentEncoding)
            let user = try await server.demoUser()
            let enrolled = try await TestDevice(server: server, userId: user.id).enroll(client, enrollmentToken: token)
            XCTAssertEqual(enrolled.status, .ok, enrolled.body)
            let done = try await browser.post("/realms/demo/account/enroll", ["csrf": try XCTUnwrap(page.field("csrf")), "check": "true"])
            XCTAssertEqual(done.location, "/realms/demo/account")
            let account = try await browser.get("/realms/demo/account")
            let csrf = try XCTUnwrap(account.field("csrf"))
            let removeAction = try XCTUnwrap(account.capture(#"action="(/realms/demo/account/devices/[^"]+/remove)""#))

            server.clock.advance(by: BrowserSession.recentSignIn + 60)
            let staleEnroll = try await browser.get("/realms/demo/account/enroll")
            XCTAssertEqual(staleEnroll.location, "/realms/demo/login?reauth=1&return_to=/realms/demo/account/enroll", "enrolling another phone")
            let staleRemove = try await browser.post(removeAction, ["csrf": csrf])
            XCTAssertEqual(staleRemove.location, "/realms/demo/login?reauth=1&return_to=/realms/demo/account", "removing a phone")
            let phones = try await server.runtime.pushMFA.service.devices(realm: "demo", userId: user.id)
            XCTAssertEqual(phones.count, 1, "the phone is still there")

            // This browser's own session ends without a recent sign-in.
            let sessions = try await server.runtime.accounts.browserSessions.sessions(realm: "demo", userId: user.id)
            let own = try XCTUnwrap(sessions.first)
            let endedOwn = try await browser.post("/realms/demo/account/sessions/\(own.idHash)/end", ["csrf": csrf])
            XCTAssertEqual(endedOwn.location, "/realms/demo/login?notice=logged-out")
            let afterwards = try await browser.get("/realms/demo/account")
            XCTAssertEqual(afterwards.status, .seeOther, "signed out")
        }
    }
}
