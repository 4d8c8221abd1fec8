// Tests: the browser session read as JSON for a single-page app, and its CSRF-protected logout.
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// The browser session as JSON for a single-page app: who is signed in and how, and a CSRF-protected logout.
final class SessionRoutesTests: XCTestCase {
    func testTheSessionIsReadAsJSONAndLogoutNeedsItsCSRFToken() async throws {
        try await TestServer.forEachEngine { server, client in
            let browser = TestBrowser(client)
            let anonymous = try await browser.request("/realms/demo/v1/auth/session", method: .get, headers: [:])
            XCTAssertEqual(anonymous.status, .unauthorized)
            XCTAssertEqual(try StrictJSON.parseObject(Array(anonymous.html.utf8)).string("error"), "not_signed_in")

            _ = try await browser.signIn()
            let signedIn = try await browser.request("/realms/demo/v1/auth/session", method: .get, headers: [:])
            XCTAssertEqual(signedIn.status, .ok, signedIn.html)
            XCTAssertEqual(signedIn.headers[.cacheControl], "no-store")
            let body = try StrictJSON.parseObject(Array(signedIn.html.utf8))
            XCTAssertEqual(body.object("user")?.string("username"), "test")
            XCTAssertEqual(body.array("amr")?.compactMap(\.stringValue), ["pwd"])
            let csrf = try XCTUnwrap(body.string("csrf_token"))

            let forged = try await browser.request("/realms/demo/v1/auth/logout", method: .post, headers: [SessionRoutes.csrfHeader: "not-it"])
            XCTAssertEqual(forged.status, .forbidden)
            XCTAssertEqual(try StrictJSON.parseObject(Array(forged.html.utf8)).string("error"), "csrf_mismatch")
            let stillIn = try await browser.request("/realms/demo/v1/auth/session", method: .get, headers: [:])
            XCTAssertEqual(stillIn.status, .ok, "a refused logout ends nothing")

            let loggedOut = try await browser.request("/realms/demo/v1/auth/logout", method: .post, headers: [SessionRoutes.csrfHeader: csrf])
            XCTAssertEqual(loggedOut.status, .noContent)
            let after = try await browser.request("/realms/demo/v1/auth/session", method: .get, headers: [:])
            XCTAssertEqual(after.status, .unauthorized)
            let unknownRealm = try await browser.request("/realms/nowhere/v1/auth/session", method: .get, headers: [:])
            XCTAssertEqual(unknownRealm.status, .notFound)
        }
    }
}
