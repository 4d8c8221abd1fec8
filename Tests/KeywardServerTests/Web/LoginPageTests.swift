// Tests: the login page's security headers and cookies, CSRF, wrong passwords, throttling, sessions and return_to.
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class LoginPageTests: XCTestCase {
    func testLoginPageSecurityHeadersAndCookie() async throws {
        try await TestServer.forEachEngine { _, client in
            let browser = TestBrowser(client)
            let page = try await browser.get("/realms/demo/login")
            XCTAssertEqual(page.status, .ok)
            let csp = try XCTUnwrap(page.headers[.contentSecurityPolicy])
            let nonce = try XCTUnwrap(csp.firstMatch(of: /script-src 'nonce-([^']+)'/)?.1)
            XCTAssertTrue(page.contains(#"<script nonce="\#(nonce)" src="/static/keyward.js">"#))
            for directive in ["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"] {
                XCTAssertTrue(csp.contains(directive), directive)
            }
            XCTAssertEqual(page.headers[HTTPField.Name("X-Content-Type-Options")!], "nosniff")
            XCTAssertEqual(page.headers[.cacheControl], "no-store")
            let cookie = try XCTUnwrap(page.headers[.setCookie])
            XCTAssertTrue(cookie.hasPrefix("keyward-session="), "plain-http public URL: no __Host- prefix")
            for attribute in ["Path=/", "HttpOnly", "SameSite=Lax"] { XCTAssertTrue(cookie.contains(attribute), attribute) }
            XCTAssertTrue(page.contains(#"<label for="username">"#))
            XCTAssertTrue(page.contains(#"<html lang="en">"#))
            let script = try await client.execute(uri: "/static/keyward.js", method: .get) { ($0.status, $0.headers[.contentType]) }
            XCTAssertEqual(script.0, .ok)
            XCTAssertEqual(script.1, "text/javascript; charset=utf-8")
        }
    }

    func testSecureCookieOnHTTPSPublicURL() async throws {
        try await TestServer.forEachEngine(configure: { $0.publicURL = "https://keyward.test" }) { _, client in
            let page = try await TestBrowser(client).get("/realms/demo/login")
            let cookie = try XCTUnwrap(page.headers[.setCookie])
            XCTAssertTrue(cookie.hasPrefix("__Host-keyward-session="))
            XCTAssertTrue(cookie.contains("; Secure"))
        }
    }

    func testCSRFIsRequired() async throws {
        try await TestServer.forEachEngine { _, client in
            let browser = TestBrowser(client)
            _ = try await browser.get("/realms/demo/login")
            let missing = try await browser.post("/realms/demo/login", ["username": "test", "password": "test"])
            XCTAssertEqual(missing.status, .forbidden)
            let wrong = try await browser.post("/realms/demo/login", ["csrf": "forged", "username": "test", "password": "test"])
            XCTAssertEqual(wrong.status, .forbidden)
            let noSession = try await TestBrowser(client).post("/realms/demo/login", ["csrf": "x", "username": "test", "password": "test"])
            XCTAssertEqual(noSession.status, .seeOther)
            XCTAssertEqual(noSession.location, "/realms/demo/login?notice=expired")
        }
    }

    func testWrongPasswordAndDisabledAccount() async throws {
        try await TestServer.forEachEngine { server, client in
            let browser = TestBrowser(client)
            let wrong = try await browser.signIn(password: "nope")
            XCTAssertEqual(wrong.status, .unauthorized)
            XCTAssertTrue(wrong.contains("Wrong username or password."))
            XCTAssertTrue(wrong.contains(#"value="test""#), "the username is kept")
            let unknown = try await TestBrowser(client).signIn(username: "ghost", password: "nope")
            XCTAssertEqual(unknown.status, .unauthorized)
            XCTAssertTrue(unknown.contains("Wrong username or password."), "same answer for unknown users")
            let account = try await browser.get("/realms/demo/account")
            XCTAssertEqual(account.status, .seeOther, "no session after a failed login")
            let user = try await server.demoUser()
            try await server.runtime.accounts.users.setEnabled(false, realm: "demo", id: user.id)
            let disabled = try await TestBrowser(client).signIn()
            XCTAssertEqual(disabled.status, .forbidden)
        }
    }

    func testRepeatedWrongPasswordsAreThrottled() async throws {
        try await TestServer.forEachEngine { server, client in
            for attempt in 1...5 {
                let wrong = try await TestBrowser(client).signIn(password: "guess-\(attempt)")
                XCTAssertEqual(wrong.status, .unauthorized)
            }
            let blocked = try await TestBrowser(client).signIn()
            XCTAssertEqual(blocked.status, .tooManyRequests, "even the right password waits out the window")
            XCTAssertNotNil(blocked.headers[.retryAfter])
            XCTAssertTrue(blocked.contains("Too many failed sign-ins"))
            server.clock.advance(by: 15 * 60)
            let allowed = try await TestBrowser(client).signIn()
            XCTAssertEqual(allowed.status, .seeOther)
        }
    }

    func testSessionIsRotatedAtLoginAndLogoutEndsIt() async throws {
        try await TestServer.forEachEngine { _, client in
            let browser = TestBrowser(client)
            _ = try await browser.get("/realms/demo/login")
            let anonymous = try XCTUnwrap(browser.sessionCookie)
            let landed = try await browser.signIn()
            XCTAssertEqual(landed.status, .seeOther)
            XCTAssertEqual(landed.location, "/realms/demo/account")
            XCTAssertNotEqual(browser.sessionCookie, anonymous, "a new session id after the password (fixation)")
            let account = try await browser.get("/realms/demo/account")
            XCTAssertEqual(account.status, .ok)
            XCTAssertTrue(account.contains(#"<strong id="username">test</strong>"#))
            let out = try await browser.post("/realms/demo/logout", ["csrf": account.field("csrf") ?? ""])
            XCTAssertEqual(out.location, "/realms/demo/login?notice=logged-out")
            let after = try await browser.get("/realms/demo/account")
            XCTAssertEqual(after.status, .seeOther)
        }
    }

    func testReturnToAcceptsOnlySameOriginPaths() async throws {
        try await TestServer.forEachEngine { _, client in
            let good = try await TestBrowser(client).signIn(query: "?return_to=%2Frealms%2Fdemo%2Faccount%3Fx%3D1")
            XCTAssertEqual(good.location, "/realms/demo/account?x=1")
            for evil in ["https%3A%2F%2Fevil.example%2F", "%2F%2Fevil.example", "%2F%5Cevil.example", "javascript%3Aalert(1)"] {
                let answer = try await TestBrowser(client).signIn(query: "?return_to=\(evil)")
                XCTAssertEqual(answer.location, "/realms/demo/account", evil)
            }
        }
    }
}
