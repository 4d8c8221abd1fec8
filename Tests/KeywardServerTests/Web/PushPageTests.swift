// Tests: the push sign-in pages: approval with the shown number, denial, expiry, limits, the enrollment QR code.
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class PushPageTests: XCTestCase {
    /// Password → waiting page with the number → the phone approves with that number → the form lands logged in.
    func testPushLoginApprovedWithTheNumberShown() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.userVerification = .numberMatch }
            let (device, token) = try await server.enrolledDevice(client)
            let browser = TestBrowser(client)
            let afterPassword = try await browser.signIn(query: "?client_id=test-app")
            XCTAssertEqual(afterPassword.location, "/realms/demo/login/push")
            let waiting = try await browser.get("/realms/demo/login/push")
            XCTAssertEqual(waiting.status, .ok)
            let shown = try XCTUnwrap(waiting.capture(#"id="verification-code"[^>]*>([0-9]+)<"#))
            let challengeId = try XCTUnwrap(waiting.field("challengeId"))
            let eventsURL = try XCTUnwrap(waiting.capture(#"data-events-url="([^"]+)""#))
            XCTAssertTrue(eventsURL.hasPrefix("/realms/demo/push-mfa/login/challenges/\(challengeId)/events?secret="))
            XCTAssertTrue(waiting.contains(#"<noscript><meta http-equiv="refresh" content="5"></noscript>"#))
            XCTAssertTrue(waiting.contains("demo-aid"), "demo realm shows the confirm token")

            // A reload shows the same challenge, not a new one.
            let reloaded = try await browser.get("/realms/demo/login/push")
            XCTAssertEqual(reloaded.field("challengeId"), challengeId)

            let pending = try await device.pending(client, token: token)
            XCTAssertEqual(pending.json["challenges"]?.arrayValue?.first?.objectValue?["clientId"], "test-app")
            let approved = try await device.respond(client, token: token, challengeId: challengeId, userVerification: .string(shown))
            XCTAssertEqual(approved.status, .ok, approved.body)

            let events = try await client.events(String(eventsURL.dropFirst("/realms/demo/push-mfa".count)))
            XCTAssertEqual(events.statuses, ["APPROVED"])
            let done = try await browser.post("/realms/demo/login/push", ["csrf": waiting.field("csrf") ?? "", "challengeId": challengeId])
            XCTAssertEqual(done.location, "/realms/demo/account")
            let account = try await browser.get("/realms/demo/account")
            XCTAssertEqual(account.status, .ok)
            XCTAssertTrue(account.contains("Test phone"))
        }
    }

    func testNoJavaScriptRefreshCompletesTheLogin() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            let waiting = try await browser.get("/realms/demo/login/push")
            let challengeId = try XCTUnwrap(waiting.field("challengeId"))
            _ = try await device.respond(client, token: token, challengeId: challengeId)
            let refreshed = try await browser.get("/realms/demo/login/push")
            XCTAssertEqual(refreshed.location, "/realms/demo/account")
        }
    }

    func testDeniedExpiredLockedOutAndCancel() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.maxPendingChallenges = 5 }
            let (device, _) = try await server.enrolledDevice(client)
            func waitingBrowser() async throws -> (TestBrowser, TestBrowser.Page) {
                let browser = TestBrowser(client)
                _ = try await browser.signIn()
                return (browser, try await browser.get("/realms/demo/login/push"))
            }
            // Denied on the phone.
            var (browser, waiting) = try await waitingBrowser()
            _ = try await device.respond(client, token: try await device.accessToken(client), challengeId: waiting.field("challengeId")!, action: "deny")
            let denied = try await browser.post("/realms/demo/login/push", ["csrf": waiting.field("csrf")!])
            XCTAssertEqual(denied.status, .forbidden)
            XCTAssertTrue(denied.contains("Login denied"))
            let afterDenial = try await browser.get("/realms/demo/account")
            XCTAssertEqual(afterDenial.status, .seeOther)

            // Expired: a retry sends a new push.
            (browser, waiting) = try await waitingBrowser()
            server.clock.advance(by: 241)
            let expired = try await browser.post("/realms/demo/login/push", ["csrf": waiting.field("csrf")!])
            XCTAssertEqual(expired.status, .ok)
            XCTAssertTrue(expired.contains("Approval expired"))
            let retried = try await browser.post("/realms/demo/login/push", ["csrf": waiting.field("csrf")!, "retry": "true"])
            XCTAssertNotEqual(retried.field("challengeId"), waiting.field("challengeId"))
            XCTAssertNotNil(retried.field("challengeId"))

            // Resend replaces the challenge.
            let resent = try await browser.post("/realms/demo/login/push", ["csrf": waiting.field("csrf")!, "refresh": "true"])
            XCTAssertNotEqual(resent.field("challengeId"), retried.field("challengeId"))
            let replaced = try await server.runtime.pushMFA.service.challenge(id: retried.field("challengeId")!)
            XCTAssertNil(replaced)

            // Cancel.
            let cancelled = try await browser.post("/realms/demo/login/push", ["csrf": waiting.field("csrf")!, "cancel": "true"])
            XCTAssertEqual(cancelled.location, "/realms/demo/login?notice=cancelled")
            let cancelledChallenge = try await server.runtime.pushMFA.service.challenge(id: resent.field("challengeId")!)
            XCTAssertEqual(cancelledChallenge?.status, .denied)

            // Locked out from the phone: the session ended with the lockout, so the browser is back at the sign-in page.
            (browser, waiting) = try await waitingBrowser()
            _ = try await device.call(client, .post, "/login/lockout", token: try await device.accessToken(client))
            let locked = try await browser.post("/realms/demo/login/push", ["csrf": waiting.field("csrf")!])
            XCTAssertEqual(locked.location, "/realms/demo/login?notice=expired")
        }
    }

    func testTooManyPendingAndWaitRequiredPages() async throws {
        try await TestServer.forEachEngine { server, client in
            _ = try await server.enrolledDevice(client)
            let first = TestBrowser(client)
            _ = try await first.signIn()
            _ = try await first.get("/realms/demo/login/push")
            let second = TestBrowser(client)
            _ = try await second.signIn()
            let capped = try await second.get("/realms/demo/login/push")
            XCTAssertEqual(capped.status, .tooManyRequests)
            XCTAssertTrue(capped.contains("You already have a pending push approval"))

            try await server.settings { $0.waitChallengeEnabled = true }
            let firstPage = try await first.get("/realms/demo/login/push")
            let resent = try await first.post("/realms/demo/login/push", ["csrf": firstPage.field("csrf") ?? "", "refresh": "true"])
            XCTAssertEqual(resent.status, .ok, "the first push under wait-challenge is free")
            let again = try await first.post("/realms/demo/login/push", ["csrf": firstPage.field("csrf") ?? "", "refresh": "true"])
            XCTAssertEqual(again.status, .tooManyRequests)
            XCTAssertTrue(again.contains("data-wait-seconds="), again.html)
        }
    }

    /// The enrollment page's QR code decodes (SVG → PNG → zbarimg) to exactly the link on the page, and the page
    /// continues once the phone enrolls. New users in a realm that requires push MFA land here after the password.
    func testEnrollmentPageQRAndRequiredEnrollment() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.requirePushMfa = true }
            let browser = TestBrowser(client)
            let afterPassword = try await browser.signIn()
            XCTAssertEqual(afterPassword.location, "/realms/demo/account/enroll")
            let beforeEnrolling = try await browser.get("/realms/demo/account")
            XCTAssertEqual(beforeEnrolling.status, .seeOther, "not logged in before enrolling")
            let page = try await browser.get("/realms/demo/account/enroll")
            XCTAssertEqual(page.status, .ok)
            let link = try XCTUnwrap(page.capture(#"id="enrollment-link" value="([^"]+)""#))
            XCTAssertTrue(link.hasPrefix("my-secure://enroll?token="))
            let svg = try XCTUnwrap(page.capture(#"(<svg.*?</svg>)"#))
            if let decoded = try QRDecoding.decodeSVG(svg) {
                XCTAssertEqual(decoded, link)
            }
            let token = try XCTUnwrap(link.components(separatedBy: "token=").last?.removingPercentEncoding)
            let confirmTooEarly = try await browser.post("/realms/demo/account/enroll", ["csrf": page.field("csrf")!, "confirm": "true"])
            XCTAssertTrue(confirmTooEarly.contains("No Push MFA credential found yet"))

            let user = try await server.demoUser()
            let device = try TestDevice(server: server, userId: user.id)
            let enrolled = try await device.enroll(client, enrollmentToken: token)
            XCTAssertEqual(enrolled.status, .ok, enrolled.body)
            let done = try await browser.post("/realms/demo/account/enroll", ["csrf": page.field("csrf")!, "check": "true"])
            XCTAssertEqual(done.location, "/realms/demo/account")
            let account = try await browser.get("/realms/demo/account")
            XCTAssertEqual(account.status, .ok)
            XCTAssertTrue(account.contains("Test phone"))

            // Remove it again from the account page.
            let removeAction = try XCTUnwrap(account.capture(#"action="(/realms/demo/account/devices/[^"]+/remove)""#))
            let removed = try await browser.post(removeAction, ["csrf": account.field("csrf")!])
            XCTAssertEqual(removed.location, "/realms/demo/account?notice=removed")
            let devices = try await server.runtime.pushMFA.service.devices(realm: "demo", userId: user.id)
            XCTAssertTrue(devices.isEmpty)
            let foreign = try await browser.post("/realms/demo/account/devices/\(UUID().uuidString)/remove", ["csrf": account.field("csrf")!])
            XCTAssertEqual(foreign.status, .notFound)
        }
    }
}
