// Tests: Apple and Facebook provider presets and overrides, the sealed Apple key, bad settings refused by name.
import Crypto
import Foundation
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// `keyward providers add --type apple|facebook`: the presets, the overrides tests use to point them at doubles,
/// the Apple key sealed to its row, and every bad setting refused with the setting's name.
final class ProviderKindSettingsTests: XCTestCase {
    func testAppleAndFacebookAreStoredWithTheirPresetsOrOverrides() async throws {
        let p8 = P256.Signing.PrivateKey().pemRepresentation
        try await TestServer.forEachEngine { server, _ in
            let providers = server.runtime.accounts.providers
            let apple = try await providers.add(.init(
                realm: "demo", alias: "apple", kind: .apple, clientId: "com.example.web", appleTeamId: "TEAM123456", appleKeyId: "KEY1234567",
                applePrivateKeyPEM: p8
            ))
            XCTAssertEqual(apple.issuer, "https://appleid.apple.com")
            XCTAssertEqual(apple.scopes, ["name", "email"])
            XCTAssertEqual(apple.displayName, "Apple")
            XCTAssertNil(apple.sealedClientSecret)
            XCTAssertEqual(apple.endpoints, .init(
                authorization: "https://appleid.apple.com/auth/authorize", token: "https://appleid.apple.com/auth/token",
                jwks: "https://appleid.apple.com/auth/keys"
            ))
            XCTAssertEqual(apple.endpoints?.appleRevocation, "https://appleid.apple.com/auth/revoke")
            let key = try XCTUnwrap(apple.appleKey)
            XCTAssertEqual(key.teamId, "TEAM123456")
            XCTAssertEqual(key.keyId, "KEY1234567")
            let opened = try providers.masterKey.open(key.sealedPrivateKey, context: IdentityProvider.appleKeyContext(realm: "demo", alias: "apple"))
            XCTAssertEqual(try SigningKey(algorithm: .es256, serialized: opened).publicJWK.thumbprint(), try SigningKey(algorithm: .es256, pem: p8).publicJWK.thumbprint())
            XCTAssertThrowsError(
                try providers.masterKey.open(key.sealedPrivateKey, context: IdentityProvider.appleKeyContext(realm: "demo", alias: "other")),
                "the key is bound to its row"
            )
            var expected = apple
            let stored = try await providers.provider(realm: "demo", alias: "apple")
            expected.createdAt = try XCTUnwrap(stored).createdAt
            XCTAssertEqual(stored, expected)

            let facebook = try await providers.add(.init(
                realm: "demo", alias: "facebook", kind: .facebook, clientId: "1111", clientSecret: "app-secret",
                authorizationEndpoint: "http://127.0.0.1:9501/v19.0/dialog/oauth", tokenEndpoint: "http://127.0.0.1:9501/v19.0/oauth/access_token",
                userinfoEndpoint: "http://127.0.0.1:9501/v19.0/me"
            ))
            XCTAssertEqual(facebook.issuer, "https://www.facebook.com")
            XCTAssertEqual(facebook.scopes, ["public_profile", "email"])
            XCTAssertEqual(facebook.displayName, "Facebook")
            XCTAssertNil(facebook.appleKey)
            XCTAssertEqual(facebook.endpoints?.facebookDebugToken, "http://127.0.0.1:9501/v19.0/debug_token")
            XCTAssertEqual(try providers.clientSecret(of: facebook), "app-secret")
            let storedFacebook = try await providers.provider(realm: "demo", alias: "facebook")
            XCTAssertEqual(storedFacebook?.endpoints, facebook.endpoints)

            let preset = try await providers.add(.init(realm: "demo", alias: "fb", kind: .facebook, clientId: "2222", clientSecret: "s"))
            XCTAssertEqual(preset.endpoints, .init(
                authorization: "https://www.facebook.com/v19.0/dialog/oauth", token: "https://graph.facebook.com/v19.0/oauth/access_token",
                userinfo: "https://graph.facebook.com/v19.0/me"
            ))
            XCTAssertEqual(preset.endpoints?.facebookDebugToken, "https://graph.facebook.com/v19.0/debug_token")
        }
    }

    func testEveryBadAppleOrFacebookSettingIsRefusedWithItsName() async throws {
        let p8 = P256.Signing.PrivateKey().pemRepresentation
        let p384 = P384.Signing.PrivateKey().pemRepresentation
        try await TestServer.forEachEngine(engines: [.sqlite]) { server, _ in
            let providers = server.runtime.accounts.providers
            func apple(
                teamId: String? = "TEAM123456", keyId: String? = "KEY1234567", pem: String? = p8, secret: String? = nil, issuer: String? = nil,
                scopes: [String]? = nil, token: String? = nil, jwks: String? = nil, userinfo: String? = nil
            ) -> IdentityProviderService.Registration {
                .init(
                    realm: "demo", alias: "apple", kind: .apple, issuer: issuer, clientId: "com.example.web", clientSecret: secret, scopes: scopes,
                    tokenEndpoint: token, jwksURI: jwks, userinfoEndpoint: userinfo, appleTeamId: teamId, appleKeyId: keyId, applePrivateKeyPEM: pem
                )
            }
            func facebook(
                secret: String? = "s", issuer: String? = nil, authorization: String? = nil, token: String? = nil, jwks: String? = nil,
                userinfo: String? = nil, teamId: String? = nil
            ) -> IdentityProviderService.Registration {
                .init(
                    realm: "demo", alias: "facebook", kind: .facebook, issuer: issuer, clientId: "1111", clientSecret: secret,
                    authorizationEndpoint: authorization, tokenEndpoint: token, jwksURI: jwks, userinfoEndpoint: userinfo, appleTeamId: teamId
                )
            }
            let cases: [(String, IdentityProviderService.Registration)] = [
                ("team-id", apple(teamId: nil)),
                ("team-id", apple(teamId: "team123456")),
                ("team-id", apple(teamId: "TEAM12345")),
                ("key-id", apple(keyId: nil)),
                ("key-id", apple(keyId: "KEY 123456")),
                ("private-key-file", apple(pem: nil)),
                ("private-key-file", apple(pem: "not a key")),
                ("private-key-file", apple(pem: p384)),
                ("client-secret", apple(secret: "a static secret")),
                ("issuer", apple(issuer: "http://appleid.example.com")),
                ("scopes", apple(scopes: ["name", "profile"])),
                ("token-endpoint", apple(token: "https://appleid.example.com/auth/exchange")),
                ("token-endpoint", apple(token: "http://10.0.0.1/auth/token")),
                ("jwks-uri", apple(jwks: "ftp://127.0.0.1/keys")),
                ("userinfo-endpoint", apple(userinfo: "https://appleid.apple.com/userinfo")),
                ("client-secret", facebook(secret: nil)),
                ("issuer", facebook(issuer: "https://www.facebook.com")),
                ("authorization-endpoint", facebook(authorization: "https://www.facebook.com/dialog/oauth#x")),
                ("token-endpoint", facebook(token: "https://graph.facebook.com/v19.0/token")),
                ("token-endpoint", facebook(token: "https://graph.facebook.com/v19.0/oauth/access_token?x=1")),
                ("jwks-uri", facebook(jwks: "https://graph.facebook.com/keys")),
                ("userinfo-endpoint", facebook(userinfo: "http://graph.example.com/me")),
                ("team-id", facebook(teamId: "TEAM123456")),
                ("authorization-endpoint", .init(
                    realm: "demo", alias: "sso", kind: .oidc, issuer: "https://idp.example.com", clientId: "c",
                    authorizationEndpoint: "https://idp.example.com/authorize"
                )),
                ("jwks-uri", .init(realm: "demo", alias: "google", kind: .google, clientId: "c", clientSecret: "s", jwksURI: "https://www.googleapis.com/oauth2/v3/certs")),
                ("private-key-file", .init(realm: "demo", alias: "google", kind: .google, clientId: "c", clientSecret: "s", applePrivateKeyPEM: p8)),
            ]
            for (setting, registration) in cases {
                do {
                    _ = try await providers.add(registration)
                    XCTFail("\(setting): \(registration) was accepted")
                } catch let IdentityProviderError.invalidSetting(named, _) {
                    XCTAssertEqual(named, setting, "\(registration)")
                }
            }
            let stored = try await providers.list(realm: "demo")
            XCTAssertTrue(stored.isEmpty)
        }
    }

    func testAppleBooleansAndTheFirstAuthorizationsNameAreRead() {
        XCTAssertEqual(ProviderIDToken.flag(.string("true")), true)
        XCTAssertEqual(ProviderIDToken.flag(.string("false")), false)
        XCTAssertEqual(ProviderIDToken.flag(.bool(true)), true)
        XCTAssertEqual(ProviderIDToken.flag(.bool(false)), false)
        XCTAssertNil(ProviderIDToken.flag(.string("yes")))
        XCTAssertNil(ProviderIDToken.flag(nil))

        XCTAssertEqual(AppleFirstAuthorization.name(fromUserField: #"{"name":{"firstName":"Ada","lastName":"Lovelace"},"email":"a@example.test"}"#), "Ada Lovelace")
        XCTAssertEqual(AppleFirstAuthorization.name(fromUserField: #"{"name":{"firstName":" Ada "}}"#), "Ada")
        XCTAssertNil(AppleFirstAuthorization.name(fromUserField: #"{"email":"a@example.test"}"#))
        XCTAssertNil(AppleFirstAuthorization.name(fromUserField: "not json"))
        XCTAssertNil(AppleFirstAuthorization.name(fromUserField: nil))
        XCTAssertNil(AppleFirstAuthorization.name(fromUserField: #"{"name":{"firstName":"\#(String(repeating: "x", count: 5000))"}}"#))
        XCTAssertEqual(AppleFirstAuthorization.name(fromUserField: #"{"name":{"firstName":"Ada\nEvil","lastName":""}}"#), "AdaEvil")
    }
}
