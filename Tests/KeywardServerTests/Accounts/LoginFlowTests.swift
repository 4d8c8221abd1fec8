// Tests: sign-in runs the first factor, then push when the user has a device, and records amr in the session.
import Foundation
@testable import KeywardServer
import XCTest

/// Sign-in is one flow: the first factor, the push step when the user has a device, then the session, which
/// records how the user signed in (`amr`) and the browser it began in.
final class LoginFlowTests: XCTestCase {
    private static func storedSession(_ server: TestServer, _ browser: TestBrowser) async throws -> BrowserSession? {
        let pair = try XCTUnwrap(browser.sessionCookie)
        let value = String(pair[pair.index(after: try XCTUnwrap(pair.firstIndex(of: "=")))...])
        return try await server.runtime.accounts.browserSessions.session(cookie: value, realm: "demo")
    }

    func testThePasswordThenThePushRecordPwdThenMfa() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            let afterPassword = try await Self.storedSession(server, browser)
            XCTAssertEqual(afterPassword?.amr, ["pwd"])
            XCTAssertEqual(afterPassword?.stage, .passwordVerified)

            let waiting = try await browser.get("/realms/demo/login/push")
            let approved = try await device.respond(client, token: token, challengeId: try XCTUnwrap(waiting.field("challengeId")))
            XCTAssertEqual(approved.status, .ok, approved.body)
            let done = try await browser.post("/realms/demo/login/push", ["csrf": waiting.field("csrf") ?? ""])
            XCTAssertEqual(done.location, "/realms/demo/account")
            let signedIn = try await Self.storedSession(server, browser)
            XCTAssertEqual(signedIn?.stage, .authenticated)
            XCTAssertEqual(signedIn?.amr, ["pwd", "mfa"])
        }
    }

    func testAPasswordAloneRecordsPwd() async throws {
        try await TestServer.forEachEngine { server, client in
            let browser = TestBrowser(client)
            let landed = try await browser.signIn()
            XCTAssertEqual(landed.location, "/realms/demo/account")
            let session = try await Self.storedSession(server, browser)
            XCTAssertEqual(session?.stage, .authenticated)
            XCTAssertEqual(session?.amr, ["pwd"])
        }
    }
}
