// Tests: locking out or disabling a user ends their browser sessions, sends no new push, closes the device API.
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// A locked-out or disabled user keeps nothing: every browser session of theirs ends at once, the waiting page
/// and "Try again" send no push, the account page is closed, and their devices cannot call the device API.
final class DisabledUserSessionTests: XCTestCase {
    func testLockoutEndsEveryBrowserSessionAndNoNewPushCanBeSent() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let user = try await server.demoUser()

            // Browser A is signed in (push approved), browser B waits on the push page.
            let signedIn = TestBrowser(client)
            _ = try await signedIn.signIn()
            let approving = try await signedIn.get("/realms/demo/login/push")
            let approved = try await device.respond(client, token: token, challengeId: try XCTUnwrap(approving.field("challengeId")))
            XCTAssertEqual(approved.status, .ok, approved.body)
            let done = try await signedIn.post("/realms/demo/login/push", ["csrf": approving.field("csrf") ?? ""])
            XCTAssertEqual(done.location, "/realms/demo/account")
            let accountBefore = try await signedIn.get("/realms/demo/account")
            XCTAssertEqual(accountBefore.status, .ok)

            let waiting = TestBrowser(client)
            _ = try await waiting.signIn()
            let waitingPage = try await waiting.get("/realms/demo/login/push")
            XCTAssertNotNil(waitingPage.field("challengeId"))

            let lockout = try await device.call(client, .post, "/login/lockout", token: try await device.accessToken(client))
            XCTAssertEqual(lockout.status, .ok, lockout.body)

            let account = try await signedIn.get("/realms/demo/account")
            XCTAssertEqual(account.status, .seeOther)
            XCTAssertTrue(account.location?.hasPrefix("/realms/demo/login") ?? false, "back at the sign-in page: \(account.location ?? "-")")
            let waitingAgain = try await waiting.get("/realms/demo/login/push")
            XCTAssertTrue(waitingAgain.location?.hasPrefix("/realms/demo/login") ?? false, "waiting page: \(waitingAgain.location ?? "-")")
            let retry = try await waiting.post("/realms/demo/login/push", ["csrf": waitingPage.field("csrf") ?? "", "retry": "true"])
            XCTAssertTrue(retry.location?.hasPrefix("/realms/demo/login") ?? false, "try again: \(retry.status) \(retry.location ?? "-")")
            let pending = try await SQLPushChallengeStore(database: server.runtime.database)
                .pendingChallenges(realm: "demo", userId: user.id, kind: .authentication, now: server.clock.now())
            XCTAssertEqual(pending.count, 0, "no push was sent after the lockout")

            let deviceCall = try await device.pending(client, token: try await device.accessToken(client))
            XCTAssertEqual(deviceCall.status, .forbidden, deviceCall.body)

            // Enabling the account again does not bring the old sessions back.
            try await server.runtime.accounts.users.setEnabled(true, realm: "demo", id: user.id)
            let afterEnable = try await signedIn.get("/realms/demo/account")
            XCTAssertEqual(afterEnable.status, .seeOther)
        }
    }

    func testDisablingAUserEndsTheirSessions() async throws {
        try await TestServer.forEachEngine { server, client in
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            let before = try await browser.get("/realms/demo/account")
            XCTAssertEqual(before.status, .ok)
            let other = TestBrowser(client)
            _ = try await other.signIn()

            let user = try await server.demoUser()
            try await server.runtime.accounts.users.setEnabled(false, realm: "demo", id: user.id)
            for session in [browser, other] {
                let account = try await session.get("/realms/demo/account")
                XCTAssertEqual(account.status, .seeOther)
                XCTAssertTrue(account.location?.hasPrefix("/realms/demo/login") ?? false)
            }
            try await server.runtime.accounts.users.setEnabled(true, realm: "demo", id: user.id)
            let afterEnable = try await browser.get("/realms/demo/account")
            XCTAssertEqual(afterEnable.status, .seeOther, "a session ended by disabling stays ended")
        }
    }
}
