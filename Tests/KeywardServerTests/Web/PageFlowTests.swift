// Tests: the paths between the sign-in pages: going back, vanished devices, reloads, and HTML error pages.
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// The paths between the pages: going back to the login page mid-way, a device that disappears before the push
/// step, what the waiting and enrollment pages show when reloaded, and the HTML error pages.
final class PageFlowTests: XCTestCase {
    /// A reload of the login page keeps the browser's pre-login state (same CSRF token, no row written) and takes
    /// the newest return_to; a session that is signed in is sent on.
    func testReloadingTheLoginPageKeepsTheSession() async throws {
        try await TestServer.forEachEngine { _, client in
            let browser = TestBrowser(client)
            let first = try await browser.get("/realms/demo/login?return_to=%2Frealms%2Fdemo%2Faccount%3Ffirst")
            let cookie = try XCTUnwrap(browser.sessionCookie)
            let second = try await browser.get("/realms/demo/login?return_to=%2Frealms%2Fdemo%2Faccount%3Fsecond")
            XCTAssertEqual(second.field("csrf"), first.field("csrf"), "the state is reused, so a form open in another tab stays valid")
            let landed = try await browser.post("/realms/demo/login", ["csrf": second.field("csrf") ?? "", "username": "test", "password": "test"])
            XCTAssertEqual(landed.location, "/realms/demo/account?second")
            XCTAssertNotEqual(browser.sessionCookie, cookie, "still rotated at the password")
            let again = try await browser.get("/realms/demo/login?return_to=%2Frealms%2Fdemo%2Faccount%3Fthird")
            XCTAssertEqual(again.location, "/realms/demo/account?third", "a signed-in session goes where the login page was asked to")
        }
    }

    /// Back on the login page with a push pending, the next password entry replaces that push instead of being
    /// refused as "too many pending" until it expires.
    func testBackToTheLoginPageReplacesThePendingPush() async throws {
        try await TestServer.forEachEngine { server, client in
            _ = try await server.enrolledDevice(client)
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            let firstWait = try await browser.get("/realms/demo/login/push")
            let firstChallenge = try XCTUnwrap(firstWait.field("challengeId"))

            let login = try await browser.get("/realms/demo/login")
            XCTAssertEqual(login.status, .ok)
            let afterPassword = try await browser.post("/realms/demo/login", ["csrf": login.field("csrf") ?? "", "username": "test", "password": "test"])
            XCTAssertEqual(afterPassword.location, "/realms/demo/login/push")
            let secondWait = try await browser.get("/realms/demo/login/push")
            XCTAssertEqual(secondWait.status, .ok, secondWait.html)
            let secondChallenge = try XCTUnwrap(secondWait.field("challengeId"))
            XCTAssertNotEqual(secondChallenge, firstChallenge)
            let replaced = try await server.runtime.pushMFA.service.challenge(id: firstChallenge)
            XCTAssertEqual(replaced?.status, .denied, "the first push was cancelled")

            // Another browser still counts against the cap: only this browser's own push gives way.
            let other = TestBrowser(client)
            _ = try await other.signIn()
            let capped = try await other.get("/realms/demo/login/push")
            XCTAssertEqual(capped.status, .tooManyRequests)
        }
    }

    /// The device went away between the password and the push step: the realm's rule decides, as at the password.
    func testDeviceRemovedBeforeThePushStepFollowsTheRealmRule() async throws {
        try await TestServer.forEachEngine { server, client in
            let user = try await server.demoUser()
            for required in [true, false] {
                try await server.settings { $0.requirePushMfa = required }
                _ = try await server.enrolledDevice(client)
                let browser = TestBrowser(client)
                let afterPassword = try await browser.signIn()
                XCTAssertEqual(afterPassword.location, "/realms/demo/login/push")
                for device in try await server.runtime.pushMFA.service.devices(realm: "demo", userId: user.id) {
                    try await server.runtime.pushMFA.service.removeDevice(realm: "demo", userId: user.id, credentialId: device.id)
                }
                let next = try await browser.get("/realms/demo/login/push")
                let account = try await browser.get("/realms/demo/account")
                if required {
                    XCTAssertEqual(next.location, "/realms/demo/account/enroll")
                    XCTAssertEqual(account.status, .seeOther, "not signed in without a device when the realm requires one")
                    let enroll = try await browser.get("/realms/demo/account/enroll")
                    XCTAssertEqual(enroll.status, .ok)
                } else {
                    XCTAssertEqual(next.location, "/realms/demo/account")
                    XCTAssertEqual(account.status, .ok)
                }
            }
        }
    }

    /// The waiting page shows exactly the stored challenge's number or PIN, and a reload of a demo realm's page
    /// shows the confirm token of that same challenge again.
    func testWaitingPageShowsTheStoredNumberOrPIN() async throws {
        try await TestServer.forEachEngine { server, client in
            _ = try await server.enrolledDevice(client)
            for mode in [UserVerification.Mode.numberMatch, .pin] {
                try await server.settings {
                    $0.userVerification = mode
                    $0.userVerificationPinLength = 6
                }
                let browser = TestBrowser(client)
                _ = try await browser.signIn()
                let waiting = try await browser.get("/realms/demo/login/push")
                let challengeId = try XCTUnwrap(waiting.field("challengeId"))
                let stored = try await server.runtime.pushMFA.service.challenge(id: challengeId)
                let expected = try XCTUnwrap(stored?.userVerification.expectedValue)
                XCTAssertEqual(waiting.capture(#"id="verification-code"[^>]*>([0-9]+)<"#), expected, "\(mode)")
                if mode == .pin { XCTAssertEqual(expected.count, 6) }
                XCTAssertTrue(waiting.contains(mode == .pin ? "enter this PIN" : "tap this number"))

                let reloaded = try await browser.get("/realms/demo/login/push")
                XCTAssertEqual(reloaded.field("challengeId"), challengeId)
                let token = try XCTUnwrap(reloaded.capture(#"id="confirm-token">([^<]+)<"#), "demo aid on a reload")
                XCTAssertEqual(try JWS.parse(token).claims()["cid"]?.stringValue, challengeId)
                XCTAssertNotNil(reloaded.capture(#"href="(my-secure://confirm\?token=[^"]+)" id="open-app""#))
                _ = try await browser.post("/realms/demo/login/push", ["csrf": reloaded.field("csrf") ?? "", "cancel": "true"])
            }
        }
    }

    /// A realm that is not a demo never shows the confirm token.
    func testProductionRealmHidesTheConfirmToken() async throws {
        try await TestServer.forEachEngine { server, client in
            _ = try await server.runtime.oauth.realms.createRealm(name: "acme")
            let user = try await server.runtime.accounts.users.createUser(realm: "acme", username: "alice", password: "s3cret")
            var device = try TestDevice(server: server, userId: user.id)
            device.realm = "acme"
            let enrollment = try await server.runtime.pushMFA.service.startEnrollment(realm: "acme", user: user)
            let enrolled = try await device.enroll(client, enrollmentToken: enrollment.enrollmentToken)
            XCTAssertEqual(enrolled.status, .ok, enrolled.body)
            let browser = TestBrowser(client)
            let afterPassword = try await browser.signIn(realm: "acme", username: "alice", password: "s3cret")
            XCTAssertEqual(afterPassword.location, "/realms/acme/login/push")
            for _ in 0..<2 {  // first render and reload
                let waiting = try await browser.get("/realms/acme/login/push")
                XCTAssertEqual(waiting.status, .ok)
                XCTAssertNotNil(waiting.field("challengeId"))
                XCTAssertFalse(waiting.contains("confirm-token"))
                XCTAssertFalse(waiting.contains("demo-aid"))
            }
        }
    }

    /// With request_uri links, the enrollment page's QR code holds the request_uri link, a reload shows the same
    /// link, the handle serves the enrollment token, and the phone enrolling moves the page on.
    func testRequestURIEnrollmentLinkSurvivesAReload() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.enrollmentUseRequestUri = true }
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            let page = try await browser.get("/realms/demo/account/enroll")
            XCTAssertEqual(page.status, .ok)
            let link = try XCTUnwrap(page.capture(#"id="enrollment-link" value="([^"]+)""#))
            let prefix = "my-secure://enroll?request_uri="
            XCTAssertTrue(link.hasPrefix(prefix), link)
            if let decoded = try QRDecoding.decodeSVG(try XCTUnwrap(page.capture(#"(<svg.*?</svg>)"#))) {
                XCTAssertEqual(decoded, link)
            }
            let reloaded = try await browser.get("/realms/demo/account/enroll")
            XCTAssertEqual(reloaded.capture(#"id="enrollment-link" value="([^"]+)""#), link, "same handle after a reload")

            let requestURI = try XCTUnwrap(String(link.dropFirst(prefix.count)).removingPercentEncoding)
            XCTAssertTrue(requestURI.hasPrefix(TestServer.publicURL + "/realms/demo/push-mfa/enroll/request-token/"))
            let fetched = try await client.execute(uri: String(requestURI.dropFirst(TestServer.publicURL.count)), method: .get) {
                ($0.status, $0.headers[.contentType], String(buffer: $0.body))
            }
            XCTAssertEqual(fetched.0, .ok)
            XCTAssertEqual(fetched.1, "application/jwt")

            let device = try TestDevice(server: server, userId: try await server.demoUser().id)
            let enrolled = try await device.enroll(client, enrollmentToken: fetched.2)
            XCTAssertEqual(enrolled.status, .ok, enrolled.body)
            let done = try await browser.post("/realms/demo/account/enroll", ["csrf": page.field("csrf") ?? "", "check": "true"])
            XCTAssertEqual(done.location, "/realms/demo/account")

            let next = try await browser.get("/realms/demo/account/enroll")
            XCTAssertNotEqual(next.capture(#"id="enrollment-link" value="([^"]+)""#), link, "a new enrollment gets a new handle")
        }
    }

    /// Errors on pages are pages: HTML under the same CSP, with the request id, and no internals.
    func testPageErrorsAreHTMLWithTheRequestId() async throws {
        try await TestServer.forEachEngine { server, client in
            let missing = try await TestBrowser(client).get("/realms/no-such-realm/login")
            XCTAssertEqual(missing.status, .notFound)
            XCTAssertEqual(missing.headers[.contentType], "text/html; charset=utf-8")
            XCTAssertTrue(missing.headers[.contentSecurityPolicy]?.contains("script-src 'nonce-") ?? false)
            let requestId = try XCTUnwrap(missing.headers[HTTPField.Name("X-Request-Id")!])
            XCTAssertTrue(missing.contains("<code>\(requestId)</code>"), missing.html)
            XCTAssertTrue(missing.contains("Not found"))

            // The device API keeps its JSON errors.
            let api = try await client.execute(uri: "/realms/demo/push-mfa/login/pending", method: .get) { ($0.status, $0.headers[.contentType]) }
            XCTAssertEqual(api.0, .badRequest)
            XCTAssertEqual(api.1, "application/json")

            // Storage gone: a 503 page that names no engine and shows no error text.
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            try await server.runtime.database.close()
            let down = try await browser.get("/realms/demo/account")
            XCTAssertEqual(down.status, .serviceUnavailable, down.html)
            XCTAssertTrue(down.contains("Temporarily unavailable"))
            XCTAssertNotNil(down.capture(#"Request id: <code>([^<]+)</code>"#))
            for leaked in ["SQLite", "PostgreSQL", "unavailable(", "StoreError", "failed:"] {
                XCTAssertFalse(down.contains(leaked), leaked)
            }
        }
    }
}
