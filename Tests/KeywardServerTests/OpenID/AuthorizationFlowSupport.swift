// Test support: an app signing a person in through the authorization endpoint, with PKCE, in a TestBrowser.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// One app's side of the code flow: its verifier, state and nonce, the authorization URL, and the token requests.
struct TestApp {
    var clientId: String
    var redirectURI: String
    var verifier = Base64URL.encode(SecureRandom.bytes(32))
    var state = "state-" + Base64URL.encode(SecureRandom.bytes(6))
    var nonce = "nonce-" + Base64URL.encode(SecureRandom.bytes(6))
    var scope = "openid"

    var challenge: String { PKCE.challenge(for: verifier) }

    /// The authorization URL with `extra` parameters added or (with an empty value) removed.
    func authorizationPath(realm: String = "demo", _ extra: [String: String] = [:]) -> String {
        var parameters = [
            "response_type": "code", "client_id": clientId, "redirect_uri": redirectURI, "scope": scope, "state": state, "nonce": nonce,
            "code_challenge": challenge, "code_challenge_method": "S256",
        ]
        for (name, value) in extra { parameters[name] = value.isEmpty ? nil : value }
        let query = parameters.sorted { $0.key < $1.key }.map { "\(TestBrowser.encode($0.key))=\(TestBrowser.encode($0.value))" }.joined(separator: "&")
        return "/realms/\(realm)/protocol/openid-connect/auth?" + query
    }

    /// Follows the authorization through a browser that signs in as `username` when asked, and returns where it
    /// sends the app (the redirect URI with the code or an error), failing the test when it stops elsewhere.
    func authorize(_ browser: TestBrowser, username: String = "test", password: String = "test", _ extra: [String: String] = [:]) async throws -> URLComponents {
        var page = try await browser.get(authorizationPath(extra))
        for _ in 0..<6 {
            guard page.status == .seeOther, let location = page.location else {
                XCTFail("the authorization stopped at \(page.status): \(page.html.prefix(400))")
                throw CancellationError()
            }
            if !location.hasPrefix("/") { return try XCTUnwrap(URLComponents(string: location)) }
            if location.hasPrefix("/realms/demo/login") {
                let login = try await browser.get(location)
                XCTAssertEqual(login.status, .ok)
                page = try await browser.post("/realms/demo/login", ["csrf": login.field("csrf") ?? "", "username": username, "password": password])
            } else {
                page = try await browser.get(location)
            }
        }
        XCTFail("too many redirects")
        throw CancellationError()
    }

    func tokenForm(code: String, verifier: String? = nil, redirectURI: String? = nil, clientId: String? = nil) -> String {
        [
            ("grant_type", "authorization_code"), ("code", code), ("code_verifier", verifier ?? self.verifier),
            ("redirect_uri", redirectURI ?? self.redirectURI), ("client_id", clientId ?? self.clientId),
        ].map { "\($0.0)=\(TestBrowser.encode($0.1))" }.joined(separator: "&")
    }

    func refreshForm(_ token: String, clientId: String? = nil) -> String {
        "grant_type=refresh_token&refresh_token=\(TestBrowser.encode(token))&client_id=\(TestBrowser.encode(clientId ?? self.clientId))"
    }
}

extension URLComponents {
    func parameter(_ name: String) -> String? { queryItems?.first { $0.name == name }?.value }
}

extension TestServer {
    /// A public client of the demo realm that registered `redirectURI`.
    @discardableResult
    func registerApp(
        _ clientId: String = "app", redirectURI: String = "com.example.app:/cb", firstParty: Bool = true, requireDPoP: Bool = false, scope: String = ""
    ) async throws -> TestApp {
        let redirects = try ClientRedirects(redirectURIs: [redirectURI], postLogoutRedirectURIs: [], firstParty: firstParty, requirePAR: false)
        _ = try await runtime.oauth.clients.createPublicClient(realm: "demo", clientId: clientId, requireDPoP: requireDPoP, scope: scope, redirects: redirects)
        return TestApp(clientId: clientId, redirectURI: redirectURI)
    }

    /// Verifies an id_token with the realm's published keys, as a relying party would.
    func verifyIDToken(_ token: String, clientId: String) async throws -> JSONObject {
        let keys = try await runtime.oauth.keys.publishedKeys(realm: "demo")
        let policy = JWTVerificationPolicy(
            allowedAlgorithms: [.es256], keys: .set(keys), requiredClaims: ["exp", "iat", "sub", "aud", "auth_time", "at_hash"],
            issuer: Self.publicURL + "/realms/demo", audience: clientId
        )
        return try JWTVerifier.verify(token, policy: policy, now: clock.now()).claims
    }
}
