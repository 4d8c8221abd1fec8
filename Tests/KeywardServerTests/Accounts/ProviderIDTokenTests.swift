// Tests: every id_token rule refuses with its own message, Google's issuer and domain rules, and discovery checks.
import Crypto
import Foundation
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// Every id_token rule refuses with its own message, and nothing but a token meeting all of them passes.
final class ProviderIDTokenTests: XCTestCase {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let issuer = "https://idp.example.test"
    static let nonce = "n-0S6_WzA2Mj"

    struct Setup {
        let key: SigningKey
        let keys: JWKSet
        var provider: IdentityProvider
        var metadata: IdentityProviderMetadata
    }

    static func setup() throws -> Setup {
        let key = try SigningKey.generate(.rs256, rsaBits: 2048)
        var jwk = key.publicJWK
        jwk.kid = "k1"
        let provider = IdentityProvider(
            realm: "demo", alias: "corp", kind: .oidc, issuer: issuer, clientId: "keyward", sealedClientSecret: nil, scopes: ["openid"],
            displayName: "Corp", createdAt: now
        )
        let metadata = try IdentityProviderMetadata(json: StrictJSON.serialize([
            "issuer": .string(issuer), "authorization_endpoint": .string(issuer + "/authorize"), "token_endpoint": .string(issuer + "/token"),
            "jwks_uri": .string(issuer + "/jwks"), "id_token_signing_alg_values_supported": ["RS256"],
        ]))
        return Setup(key: key, keys: JWKSet(keys: [jwk]), provider: provider, metadata: metadata)
    }

    static func claims(_ changes: JSONObject = [:], removing: [String] = []) -> JSONObject {
        var claims: JSONObject = [
            "iss": .string(issuer), "sub": "248289761001", "aud": ["keyward"], "exp": .number(now.timeIntervalSince1970 + 300),
            "iat": .number(now.timeIntervalSince1970), "nonce": .string(nonce), "email": "alice@example.test", "email_verified": "true",
            "name": "Alice",
        ]
        for (name, value) in changes { claims[name] = value }
        for name in removing { claims[name] = nil }
        return claims
    }

    static func token(_ setup: Setup, claims: JSONObject = claims(), header: JSONObject = ["alg": "RS256", "typ": "JWT", "kid": "k1"]) throws -> String {
        try JWS.sign(header: header, claims: claims, key: setup.key)
    }

    func testAGoodTokenGivesTheSubjectAndProfileWithStringBooleans() throws {
        let setup = try Self.setup()
        let verified = try ProviderIDToken(try Self.token(setup), provider: setup.provider, metadata: setup.metadata, keys: setup.keys, nonce: Self.nonce, now: Self.now)
        XCTAssertEqual(verified.subject, "248289761001")
        XCTAssertEqual(verified.email, "alice@example.test")
        XCTAssertEqual(verified.emailVerified, true, "Apple sends \"true\"")
        XCTAssertEqual(verified.name, "Alice")
    }

    func testEveryRuleRefusesWithItsOwnMessage() throws {
        let setup = try Self.setup()
        let now = Self.now.timeIntervalSince1970
        let parts = try Self.token(setup).split(separator: ".")
        let hs256Input = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT","kid":"k1"}"#.utf8)) + "." + parts[1]
        let hs256 = hs256Input + "." + Base64URL.encode(Array(HMAC<SHA256>.authenticationCode(
            for: Array(hs256Input.utf8), using: SymmetricKey(data: StrictJSON.serialize(setup.keys.keys[0].jsonObject))
        )))
        let cases: [(String, String, SignInFailure.Code, String)] = [
            ("wrong iss", try Self.token(setup, claims: Self.claims(["iss": "https://evil.example"])), .idTokenInvalid, "iss"),
            ("wrong aud", try Self.token(setup, claims: Self.claims(["aud": "someone-else"])), .idTokenInvalid, "aud"),
            ("no aud", try Self.token(setup, claims: Self.claims(removing: ["aud"])), .idTokenInvalid, "aud"),
            ("several aud, no azp", try Self.token(setup, claims: Self.claims(["aud": ["keyward", "other"]])), .idTokenInvalid, "azp"),
            ("azp of another client", try Self.token(setup, claims: Self.claims(["azp": "other"])), .idTokenInvalid, "azp"),
            ("expired", try Self.token(setup, claims: Self.claims(["exp": .number(now - 120)])), .idTokenInvalid, "exp"),
            ("issued in the future", try Self.token(setup, claims: Self.claims(["iat": .number(now + 600), "exp": .number(now + 900)])), .idTokenInvalid, "iat"),
            ("no iat", try Self.token(setup, claims: Self.claims(removing: ["iat"])), .idTokenInvalid, "iat"),
            ("wrong nonce", try Self.token(setup, claims: Self.claims(["nonce": "another"])), .idTokenInvalid, "nonce"),
            ("no nonce", try Self.token(setup, claims: Self.claims(removing: ["nonce"])), .idTokenInvalid, "nonce"),
            ("no sub", try Self.token(setup, claims: Self.claims(removing: ["sub"])), .idTokenInvalid, "sub"),
            ("alg none", Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + parts[1] + ".", .idTokenInvalid, "none"),
            ("HS256 keyed with the public key", hs256, .idTokenInvalid, "HS256"),
            ("ES256, which the provider does not list", try JWS.sign(header: ["alg": "ES256", "kid": "k1"], claims: Self.claims(), key: try SigningKey.generate(.es256)), .idTokenInvalid, "ES256"),
            ("unknown kid", try Self.token(setup, header: ["alg": "RS256", "kid": "k2"]), .idTokenInvalid, "k2"),
            ("another key's signature", try JWS.sign(header: ["alg": "RS256", "kid": "k1"], claims: Self.claims(), key: try SigningKey.generate(.rs256, rsaBits: 2048)), .idTokenInvalid, "signature"),
        ]
        for (name, token, code, mention) in cases {
            do {
                _ = try ProviderIDToken(token, provider: setup.provider, metadata: setup.metadata, keys: setup.keys, nonce: Self.nonce, now: Self.now)
                XCTFail("\(name): accepted")
            } catch {
                XCTAssertEqual(error.code, code, "\(name): \(error)")
                XCTAssertTrue(error.message.lowercased().contains(mention.lowercased()), "\(name): \(error.message)")
            }
        }
    }

    /// Google documents `iss` as either "https://accounts.google.com" or "accounts.google.com"; only a Google
    /// provider on Google's own issuer takes the second form, and `auth_time` is read when a provider sends it.
    func testGooglesIssuerWithoutSchemeIsAcceptedForGoogleAlone() throws {
        var setup = try Self.setup()
        let google = IdentityProviderService.googleIssuer
        setup.provider.issuer = google
        let claims = Self.claims(["iss": "accounts.google.com", "auth_time": .number(Self.now.timeIntervalSince1970 - 30)])
        XCTAssertThrowsError(try ProviderIDToken(
            try Self.token(setup, claims: claims), provider: setup.provider, metadata: setup.metadata, keys: setup.keys, nonce: Self.nonce, now: Self.now
        ), "a generic provider's issuer is exact")
        setup.provider.kind = .google
        let verified = try ProviderIDToken(
            try Self.token(setup, claims: claims), provider: setup.provider, metadata: setup.metadata, keys: setup.keys, nonce: Self.nonce, now: Self.now
        )
        XCTAssertEqual(verified.authTime, Self.now.addingTimeInterval(-30))
        XCTAssertNoThrow(try ProviderIDToken(
            try Self.token(setup, claims: Self.claims(["iss": .string(google)])), provider: setup.provider, metadata: setup.metadata, keys: setup.keys,
            nonce: Self.nonce, now: Self.now
        ))
        XCTAssertThrowsError(try ProviderIDToken(
            try Self.token(setup, claims: Self.claims(["iss": "https://evil.example"])), provider: setup.provider, metadata: setup.metadata, keys: setup.keys,
            nonce: Self.nonce, now: Self.now
        )) { error in
            XCTAssertEqual((error as? SignInFailure)?.code, .idTokenInvalid)
        }
    }

    func testAGoogleHostedDomainIsEnforced() throws {
        var setup = try Self.setup()
        setup.provider.kind = .google
        setup.provider.hostedDomain = "example.com"
        XCTAssertNoThrow(try ProviderIDToken(
            try Self.token(setup, claims: Self.claims(["hd": "example.com"])), provider: setup.provider, metadata: setup.metadata, keys: setup.keys,
            nonce: Self.nonce, now: Self.now
        ))
        for claims in [Self.claims(["hd": "other.com"]), Self.claims()] {
            XCTAssertThrowsError(try ProviderIDToken(
                try Self.token(setup, claims: claims), provider: setup.provider, metadata: setup.metadata, keys: setup.keys, nonce: Self.nonce, now: Self.now
            )) { error in
                XCTAssertEqual((error as? SignInFailure)?.code, .accountRefused)
            }
        }
    }

    func testADiscoveryDocumentIsCheckedBeforeUse() throws {
        func metadata(_ changes: JSONObject) throws -> IdentityProviderMetadata {
            var document: JSONObject = [
                "issuer": .string(Self.issuer), "authorization_endpoint": .string(Self.issuer + "/authorize"),
                "token_endpoint": .string(Self.issuer + "/token"), "jwks_uri": .string(Self.issuer + "/jwks"),
            ]
            for (name, value) in changes { document[name] = value }
            return try IdentityProviderMetadata(json: StrictJSON.serialize(document))
        }
        XCTAssertEqual(try metadata([:]).idTokenAlgorithms, [.rs256], "RS256 when the document lists none")
        XCTAssertFalse(try metadata([:]).usesSecretPost)
        XCTAssertTrue(try metadata(["token_endpoint_auth_methods_supported": ["client_secret_post"]]).usesSecretPost)
        let refused: [(JSONObject, String)] = [
            (["token_endpoint": "http://idp.example.test/token"], "token_endpoint"),
            (["jwks_uri": .null], "jwks_uri"),
            (["code_challenge_methods_supported": ["plain"]], "S256"),
            (["id_token_signing_alg_values_supported": ["none", "HS256"]], "algorithms"),
        ]
        for (changes, mention) in refused {
            XCTAssertThrowsError(try metadata(changes)) { error in
                XCTAssertTrue("\(error)".contains(mention), "\(changes): \(error)")
            }
        }
    }
}
