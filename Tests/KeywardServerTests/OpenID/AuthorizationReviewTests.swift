// Tests: the review of the OpenID Provider (session 30): each finding's sequence, refused.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardHTTPInput
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class AuthorizationReviewTests: XCTestCase {
    /// The id of the pending request the browser holds (its cookie's name).
    private static func pendingIds(_ browser: TestBrowser) -> [String] {
        browser.cookieNames.filter { $0.hasPrefix(PendingAuthorizations.cookiePrefix) }.map { String($0.dropFirst(PendingAuthorizations.cookiePrefix.count)) }
    }

    /// Finding 1: the consent form cannot skip what the request still asks for (prompt=login, max_age).
    func testTheConsentFormDoesNotSkipAFreshSignInTheRequestAsksFor() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp("partner", redirectURI: "https://partner.example/cb", firstParty: false)
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            server.clock.advance(by: 120)
            let asked = try await browser.get(app.authorizationPath(["prompt": "login"]))
            XCTAssertTrue(asked.location?.hasPrefix("/realms/demo/login?") ?? false)
            let id = try XCTUnwrap(Self.pendingIds(browser).first)
            let account = try await browser.get("/realms/demo/account")
            let forced = try await browser.post("/realms/demo/protocol/openid-connect/auth/consent", [
                "csrf": account.field("csrf") ?? "", "id": id, "decision": "allow",
            ])
            XCTAssertEqual(forced.status, .seeOther)
            XCTAssertFalse(forced.location?.contains("code=") ?? true, "a code without the fresh sign-in: \(forced.location ?? "")")
        }
    }

    /// Finding 2: a sign-in that proved no one was present (a provider answering from its own session) does not
    /// satisfy prompt=login: the app gets login_required, not a code with a fresh auth_time.
    func testASignInThatProvedNoPresenceDoesNotSatisfyPromptLogin() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            server.clock.advance(by: 120)
            _ = try await browser.get(app.authorizationPath(["prompt": "login"]))
            let id = try XCTUnwrap(Self.pendingIds(browser).first)
            let resume = PendingAuthorizations.resumePath(realm: "demo", id: id)
            let sessions = server.runtime.accounts.browserSessions
            let cookie = String(try XCTUnwrap(browser.sessionCookie).split(separator: "=", maxSplits: 1)[1])
            let current = try await sessions.session(cookie: cookie, realm: "demo")
            let user = try await XCTUnwrapAsync(try await server.runtime.accounts.users.user(realm: "demo", username: "test"))
            let completion = SignInCompletion(sessions: sessions, secondFactor: NoSecondFactor(), audit: server.runtime.audit)
            server.clock.advance(by: 1)
            let done = try await completion.complete(
                user: user, factor: .provider(alias: "idp", credentialEntered: false), realm: "demo", current: current, returnTo: resume,
                clientId: "app", userAgent: nil
            )
            browser.setCookie("keyward-session", done.cookie)
            let back = try await browser.get(resume)
            let answer = try XCTUnwrap(URLComponents(string: try XCTUnwrap(back.location)))
            XCTAssertNil(answer.parameter("code"), "a code for a sign-in that proved nothing: \(answer)")
            XCTAssertEqual(answer.parameter("error"), "login_required")
        }
    }

    /// Finding 3: a cross-site GET cannot change a signed-in session or send a push: the step-up waits for the
    /// person's click (a form with the session's CSRF token).
    func testAStepUpWaitsForThePersonsClick() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            _ = try await server.enrolledDevice(client)
            let asked = try await browser.get(app.authorizationPath(["acr_values": "urn:keyward:acr:mfa"]))
            XCTAssertEqual(asked.status, .ok, "a page, not a redirect to the push: \(asked.location ?? "")")
            let cookie = String(try XCTUnwrap(browser.sessionCookie).split(separator: "=", maxSplits: 1)[1])
            let unchanged = try await server.runtime.accounts.browserSessions.session(cookie: cookie, realm: "demo")
            XCTAssertEqual(unchanged?.stage, .authenticated, "the GET left the session as it was")
            let forged = try await browser.post("/realms/demo/protocol/openid-connect/auth/step-up", ["csrf": "forged", "id": asked.field("id") ?? ""])
            XCTAssertEqual(forged.status, .forbidden)
            let confirmed = try await browser.post("/realms/demo/protocol/openid-connect/auth/step-up", [
                "csrf": asked.field("csrf") ?? "", "id": asked.field("id") ?? "",
            ])
            XCTAssertEqual(confirmed.location, "/realms/demo/login/push")
        }
    }

    /// Finding 4: a late code with a wrong verifier (or for another client) does not revoke the sign-in its first
    /// redemption started; the same code from its own client, redeemed before, does.
    func testOnlyTheCodesOwnClientCanRevokeWithALateReuse() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            let answer = try await app.authorize(TestBrowser(client))
            let code = try XCTUnwrap(answer.parameter("code"))
            let issued = try await client.requestToken(body: app.tokenForm(code: code), proofs: [])
            let refresh = try XCTUnwrap(issued.json["refresh_token"]?.stringValue)
            server.clock.advance(by: 120)
            let stranger = try await client.requestToken(body: app.tokenForm(code: code, verifier: Base64URL.encode(SecureRandom.bytes(32))), proofs: [])
            XCTAssertEqual(stranger.status, .badRequest)
            let alive = try await client.requestToken(body: app.refreshForm(refresh), proofs: [])
            XCTAssertEqual(alive.status, .ok, "a stranger's late code revoked the sign-in: \(alive.json)")
            let next = try XCTUnwrap(alive.json["refresh_token"]?.stringValue)
            let reuse = try await client.requestToken(body: app.tokenForm(code: code), proofs: [])
            XCTAssertEqual(reuse.json["error"]?.stringValue, "invalid_grant")
            let revoked = try await client.requestToken(body: app.refreshForm(next), proofs: [])
            XCTAssertEqual(revoked.json["reason"]?.stringValue, "refresh_token_revoked", "the code's own reuse still revokes")
        }
    }

    /// Finding 5: an id_token from another browser session of the same person does not sign this browser out without
    /// asking; the one from this session does.
    func testAnIdTokenHintSignsOutAtOnceOnlyTheSessionItCameFrom() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            let first = TestBrowser(client)
            let second = TestBrowser(client)
            _ = try await second.signIn()
            let answer = try await app.authorize(first)
            let issued = try await client.requestToken(body: app.tokenForm(code: try XCTUnwrap(answer.parameter("code"))), proofs: [])
            let hint = try XCTUnwrap(issued.json["id_token"]?.stringValue)
            let elsewhere = try await second.get("/realms/demo/protocol/openid-connect/logout?id_token_hint=\(hint)")
            XCTAssertEqual(elsewhere.status, .ok, "another session of the person is asked first")
            XCTAssertNotNil(second.sessionCookie)
            let here = try await first.get("/realms/demo/protocol/openid-connect/logout?id_token_hint=\(hint)")
            XCTAssertEqual(here.status, .seeOther)
            XCTAssertNil(first.sessionCookie)
        }
    }

    /// Finding 8: a browser holds a few pending requests at most, and one too large to hold is refused to the app.
    func testPendingRequestsAreFewAndSmallEnoughForABrowser() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            let browser = TestBrowser(client)
            for _ in 0..<7 {
                _ = try await browser.get(app.authorizationPath())
                server.clock.advance(by: 1)
            }
            XCTAssertLessThanOrEqual(Self.pendingIds(browser).count, PendingAuthorizations.maxHeld)
            let newest = try await browser.get(app.authorizationPath())
            XCTAssertTrue(newest.location?.hasPrefix("/realms/demo/login?") ?? false)

            let long = String(repeating: "s", count: AuthorizationRequest.maxStateLength)
            var tooBig = app
            tooBig.state = long
            let refused = try await browser.get(tooBig.authorizationPath([
                "nonce": String(repeating: "n", count: AuthorizationRequest.maxNonceLength), "login_hint": String(repeating: "h", count: 256),
                "max_age": "999999999", "acr_values": (0..<10).map { "urn:acr:\($0)-" + String(repeating: "x", count: 100) }.joined(separator: " "),
            ]))
            let answer = try XCTUnwrap(URLComponents(string: try XCTUnwrap(refused.location)))
            XCTAssertEqual(answer.parameter("error"), "invalid_request", "\(answer)")
            XCTAssertEqual(answer.parameter("state"), long)
        }
    }
}
