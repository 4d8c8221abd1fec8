// Tests: the sign-in page writes no session row before a password is verified; forged pre-login state is refused.
import Foundation
import HTTPTypes
import KeywardJOSE
import NIOCore
@testable import KeywardServer
import SQLKit
import XCTest

/// The sign-in page is the one page anyone can load without a cookie: it must write nothing to the database,
/// or a loop of GETs fills the session table. Until a password is verified the browser holds its CSRF state
/// in a signed cookie instead of a session row.
final class CookielessLoginTests: XCTestCase {
    func testTenThousandCookielessGetsAddNoSessionRow() async throws {
        try await TestServer.forEachEngine { server, client in
            let before = try await Self.sessionRows(server)
            for _ in 0..<10_000 {
                let status = try await client.execute(uri: "/realms/demo/login", method: .get) { $0.status }
                XCTAssertEqual(status, .ok)
            }
            let after = try await Self.sessionRows(server)
            XCTAssertEqual(after, before, "cookieless GETs of the sign-in page wrote session rows")

            // The page still signs in, and only then is a session stored.
            let browser = TestBrowser(client)
            let signedIn = try await browser.signIn()
            XCTAssertEqual(signedIn.location, "/realms/demo/account")
            let account = try await browser.get("/realms/demo/account")
            XCTAssertEqual(account.status, .ok)
            let withSession = try await Self.sessionRows(server)
            XCTAssertEqual(withSession, before + 1)
        }
    }

    func testAForgedOrForeignPreLoginStateIsRefused() async throws {
        try await TestServer.forEachEngine { server, client in
            _ = try await server.runtime.oauth.realms.createRealm(name: "other")
            let page = try await client.execute(uri: "/realms/other/login", method: .get) { response in
                (response.headers[.setCookie] ?? "", String(buffer: response.body))
            }
            let cookie = try XCTUnwrap(page.0.split(separator: ";").first.map(String.init))
            let csrf = try XCTUnwrap(page.1.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)
            func post(realm: String, cookie: String, csrf: Substring) async throws -> (HTTPResponse.Status, String?) {
                let body = "csrf=\(TestBrowser.encode(String(csrf)))&username=test&password=test"
                return try await client.execute(
                    uri: "/realms/\(realm)/login", method: .post,
                    headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"], body: ByteBuffer(string: body)
                ) { ($0.status, $0.headers[.location]) }
            }
            // Another realm's state does not sign in to demo.
            let foreign = try await post(realm: "demo", cookie: cookie, csrf: csrf)
            XCTAssertEqual(foreign.1, "/realms/demo/login?notice=expired")
            // A state with one character changed is not a state.
            let last = cookie.last == "A" ? "B" : "A"
            let tampered = try await post(realm: "other", cookie: String(cookie.dropLast()) + last, csrf: csrf)
            XCTAssertEqual(tampered.1, "/realms/other/login?notice=expired")
            // A state past its lifetime has expired.
            server.clock.advance(by: BrowserSessionService.idleLifetime + 1)
            let expired = try await post(realm: "other", cookie: cookie, csrf: csrf)
            XCTAssertEqual(expired.1, "/realms/other/login?notice=expired")
        }
    }

    static func sessionRows(_ server: TestServer) async throws -> Int {
        let row = try await server.runtime.database.sql.raw("SELECT COUNT(*) AS n FROM browser_sessions").first()
        return try XCTUnwrap(row).decode(column: "n", as: Int.self)
    }
}
