// Tests: the authorization endpoint's parameters are read and refused on their own, each refusal naming the parameter.
import KeywardHTTPInput
import XCTest

/// RFC 6749 §4.1.1, RFC 7636 §4.3, OpenID Connect Core §3.1.2.1, RFC 9449 §10, as `AuthorizationRequest` reads them.
final class AuthorizationRequestTests: XCTestCase {
    /// base64url(SHA-256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")), RFC 7636 Appendix B.
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    static let valid: [String: String] = [
        "response_type": "code", "client_id": "ios-app", "redirect_uri": "com.example.app:/oauth2redirect", "scope": "openid profile openid",
        "state": "af0ifjsldkj", "nonce": "n-0S6_WzA2Mj", "code_challenge": challenge, "code_challenge_method": "S256",
    ]

    func testAValidRequestIsReadWithEachScopeOnce() throws {
        let request = try AuthorizationRequest(Self.valid)
        XCTAssertEqual(request.clientId, "ios-app")
        XCTAssertEqual(request.redirectURI, "com.example.app:/oauth2redirect")
        XCTAssertEqual(request.scopes, ["openid", "profile"])
        XCTAssertEqual(request.state, "af0ifjsldkj")
        XCTAssertEqual(request.nonce, "n-0S6_WzA2Mj")
        XCTAssertEqual(request.codeChallenge, Self.challenge)
        XCTAssertNil(request.prompt)
        XCTAssertNil(request.maxAge)

        var more = Self.valid
        more.merge([
            "prompt": "login", "login_hint": "alice@example.com", "kc_idp_hint": "google", "idp_hint": "google",
            "dpop_jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I", "max_age": "300", "acr_values": "urn:keyward:acr:mfa",
            "response_mode": "query",
        ]) { $1 }
        let full = try AuthorizationRequest(more)
        XCTAssertEqual(full.prompt, .login)
        XCTAssertEqual(full.loginHint, "alice@example.com")
        XCTAssertEqual(full.identityProviderHint, "google")
        XCTAssertEqual(full.dpopJKT, "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
        XCTAssertEqual(full.maxAge, 300)
        XCTAssertEqual(full.acrValues, ["urn:keyward:acr:mfa"])
    }

    func testEveryRefusalNamesTheParameterAndItsCode() {
        let cases: [([String: String?], AuthorizationRequestError.Code, String)] = [
            (["client_id": nil], .invalidRequest, "client_id is missing"),
            (["client_id": "a b"], .invalidRequest, "client_id is not"),
            (["client_id": String(repeating: "c", count: 129)], .invalidRequest, "client_id is not"),
            (["redirect_uri": nil], .invalidRequest, "redirect_uri is missing"),
            (["redirect_uri": "https://a.example/" + String(repeating: "p", count: 2048)], .invalidRequest, "redirect_uri is too long"),
            (["state": "caf\u{E9}"], .invalidRequest, "state must be"),
            (["state": "a\nb"], .invalidRequest, "state must be"),
            (["request": "eyJ..."], .requestNotSupported, "request objects"),
            (["registration": "{}"], .registrationNotSupported, "registration"),
            (["response_type": nil], .invalidRequest, "response_type is missing"),
            (["response_type": "token"], .unsupportedResponseType, "response_type 'token'"),
            (["response_type": "code id_token"], .unsupportedResponseType, "use code"),
            (["response_mode": "fragment"], .invalidRequest, "response_mode"),
            (["response_mode": "form_post"], .invalidRequest, "response_mode"),
            (["code_challenge": nil], .invalidRequest, "PKCE with S256 is required"),
            (["code_challenge_method": nil], .invalidRequest, "must be S256"),
            (["code_challenge_method": "plain"], .invalidRequest, "plain is not accepted"),
            (["code_challenge_method": "s256"], .invalidRequest, "must be S256"),
            (["code_challenge": "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk0"], .invalidRequest, "code_challenge must be"),
            (["code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN"], .invalidRequest, "code_challenge must be"),
            (["code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM"], .invalidRequest, "code_challenge must be"),
            (["code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM="], .invalidRequest, "code_challenge must be"),
            (["scope": "openid pro\"file"], .invalidScope, "scope 'pro\"file'"),
            (["scope": (0...50).map { "s\($0)" }.joined(separator: " ")], .invalidScope, "at most 50"),
            (["nonce": ""], .invalidRequest, "nonce must be"),
            (["nonce": String(repeating: "n", count: 513)], .invalidRequest, "nonce must be"),
            (["prompt": "consent"], .invalidRequest, "prompt 'consent' is not supported"),
            (["prompt": "none login"], .invalidRequest, "prompt=none cannot be combined"),
            (["prompt": " "], .invalidRequest, "prompt is empty"),
            (["login_hint": "a\u{0}b"], .invalidRequest, "login_hint"),
            (["kc_idp_hint": "google", "idp_hint": "apple"], .invalidRequest, "name different providers"),
            (["idp_hint": ""], .invalidRequest, "idp_hint must be"),
            (["dpop_jkt": "not-a-thumbprint"], .invalidRequest, "dpop_jkt"),
            (["max_age": "-1"], .invalidRequest, "max_age"),
            (["max_age": "1e3"], .invalidRequest, "max_age"),
            (["max_age": "1000000000"], .invalidRequest, "max_age"),
            (["acr_values": "a\\b"], .invalidScope, "acr_values"),
        ]
        for (changes, code, needle) in cases {
            var parameters = Self.valid
            for (name, value) in changes { parameters[name] = value }
            XCTAssertThrowsError(try AuthorizationRequest(parameters), needle) { error in
                guard let refusal = error as? AuthorizationRequestError else { return XCTFail("\(error)") }
                XCTAssertEqual(refusal.code, code, "\(needle): \(refusal)")
                XCTAssertTrue(refusal.description.contains(needle), "\(needle): \(refusal)")
            }
        }
    }

    func testTheTargetIsReadEvenWhenTheRestIsRefused() {
        var broken = Self.valid
        broken["response_type"] = "token"
        broken["state"] = "xyz"
        let target = AuthorizationRequest.Target(broken)
        XCTAssertEqual(target, AuthorizationRequest.Target(["client_id": "ios-app", "redirect_uri": "com.example.app:/oauth2redirect", "state": "xyz"]))
        XCTAssertNil(AuthorizationRequest.Target(["state": "caf\u{E9}"]).state, "a state no client sends is not handed back")
        XCTAssertNil(AuthorizationRequest.Target(["client_id": ""]).clientId)
    }
}
