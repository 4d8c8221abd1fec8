// Tests: the identity provider registry checks every setting by name and seals each client secret to its row.
import Foundation
@testable import KeywardServer
import XCTest

/// The provider registry: every setting checked with the setting named, the client secret sealed to its row.
final class IdentityProviderRegistryTests: XCTestCase {
    func testAProviderIsStoredWithItsSecretSealedAndListedAndRemoved() async throws {
        try await TestServer.forEachEngine { server, _ in
            let providers = server.runtime.accounts.providers
            let google = try await providers.add(.init(realm: "demo", alias: "google", kind: .google, clientId: "client-1.apps", clientSecret: "s3cret"))
            XCTAssertEqual(google.issuer, "https://accounts.google.com")
            XCTAssertEqual(google.scopes, ["openid", "email", "profile"])
            XCTAssertEqual(google.displayName, "Google")
            XCTAssertFalse(google.trustVerifiedEmail)
            let sealed = try XCTUnwrap(google.sealedClientSecret)
            XCTAssertFalse(String(decoding: sealed, as: UTF8.self).contains("s3cret"))
            let stored = try await providers.provider(realm: "demo", alias: "google")
            var expected = google
            expected.createdAt = try XCTUnwrap(stored).createdAt  // stored in milliseconds
            XCTAssertEqual(stored, expected)
            XCTAssertEqual(google.createdAt.timeIntervalSince(expected.createdAt), 0, accuracy: 0.001)
            XCTAssertEqual(try providers.clientSecret(of: try XCTUnwrap(stored)), "s3cret")
            var moved = try XCTUnwrap(stored)
            moved.alias = "other"
            XCTAssertThrowsError(try providers.clientSecret(of: moved), "a secret copied to another row does not open")

            let corporate = try await providers.add(.init(
                realm: "demo", alias: "corp-sso", kind: .oidc, issuer: "http://127.0.0.1:9400", clientId: "keyward", scopes: ["openid", "email"],
                displayName: "Corporate SSO", trustVerifiedEmail: true
            ))
            XCTAssertNil(corporate.sealedClientSecret)
            let listed = try await providers.list(realm: "demo")
            XCTAssertEqual(listed.map(\.alias), ["corp-sso", "google"])
            XCTAssertEqual(
                IdentityProvider.redirectURI(publicURL: "https://id.example.com", realm: "demo", alias: "corp-sso"),
                "https://id.example.com/realms/demo/v1/auth/corp-sso/callback"
            )

            do {
                _ = try await providers.add(.init(realm: "demo", alias: "google", kind: .google, clientId: "x", clientSecret: "y"))
                XCTFail("the alias is taken")
            } catch let error as IdentityProviderError {
                XCTAssertEqual(error, .exists("google"))
            }
            try await providers.remove(realm: "demo", alias: "google")
            let left = try await providers.list(realm: "demo")
            XCTAssertEqual(left.map(\.alias), ["corp-sso"])
            do {
                try await providers.remove(realm: "demo", alias: "google")
                XCTFail("removed twice")
            } catch let error as IdentityProviderError {
                XCTAssertEqual(error, .notFound("google"))
            }
        }
    }

    func testEveryBadSettingIsRefusedWithItsName() async throws {
        try await TestServer.forEachEngine(engines: [.sqlite]) { server, _ in
            let providers = server.runtime.accounts.providers
            let cases: [(String, IdentityProviderService.Registration)] = [
                ("alias", .init(realm: "demo", alias: "Google", kind: .google, clientId: "c", clientSecret: "s")),
                ("alias", .init(realm: "demo", alias: "-x", kind: .google, clientId: "c", clientSecret: "s")),
                ("alias", .init(realm: "demo", alias: String(repeating: "a", count: 33), kind: .google, clientId: "c", clientSecret: "s")),
                ("issuer", .init(realm: "demo", alias: "sso", kind: .oidc, clientId: "c")),
                ("issuer", .init(realm: "demo", alias: "sso", kind: .oidc, issuer: "http://idp.example.com", clientId: "c")),
                ("issuer", .init(realm: "demo", alias: "sso", kind: .oidc, issuer: "ftp://127.0.0.1", clientId: "c")),
                ("issuer", .init(realm: "demo", alias: "sso", kind: .oidc, issuer: "https://idp.example.com#x", clientId: "c")),
                ("client-id", .init(realm: "demo", alias: "sso", kind: .oidc, issuer: "https://idp.example.com", clientId: "has space")),
                ("client-id", .init(realm: "demo", alias: "sso", kind: .oidc, issuer: "https://idp.example.com", clientId: "")),
                ("client-secret", .init(realm: "demo", alias: "google", kind: .google, clientId: "c")),
                ("client-secret", .init(realm: "demo", alias: "sso", kind: .oidc, issuer: "https://idp.example.com", clientId: "c", clientSecret: "a\nb")),
                ("scopes", .init(realm: "demo", alias: "sso", kind: .oidc, issuer: "https://idp.example.com", clientId: "c", scopes: ["email"])),
                ("display-name", .init(realm: "demo", alias: "sso", kind: .oidc, issuer: "https://idp.example.com", clientId: "c", displayName: "")),
                ("hosted-domain", .init(realm: "demo", alias: "sso", kind: .oidc, issuer: "https://idp.example.com", clientId: "c", hostedDomain: "example.com")),
                ("hosted-domain", .init(realm: "demo", alias: "google", kind: .google, clientId: "c", clientSecret: "s", hostedDomain: "Example.com/x")),
                ("team-id", .init(realm: "demo", alias: "apple", kind: .apple, clientId: "c")),
                ("alias", .init(realm: "demo", alias: "session", kind: .google, clientId: "c", clientSecret: "s")),
                ("username-claim", .init(realm: "demo", alias: "google", kind: .google, clientId: "c", clientSecret: "s", usernameClaim: "sub")),
                ("username-claim", .init(realm: "demo", alias: "fb", kind: .facebook, clientId: "c", clientSecret: "s", usernameClaim: "preferred_username")),
                ("alias", .init(realm: "demo", alias: "logout", kind: .google, clientId: "c", clientSecret: "s")),
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
}
