// Tests: Sign in with Apple's client secret JWT is signed, cached and renewed; its refresh token stays sealed.
import Foundation
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// Sign in with Apple's client secret: an ES256 JWT with the claims Apple checks, signed with the sealed .p8 key,
/// kept while young and made again at half its life or when the provider's key settings change.
final class AppleClientSecretTests: XCTestCase {
    private let masterKey = MasterKey.generate()
    private let start = Date(timeIntervalSince1970: 1_750_000_000)

    private func provider(key: SigningKey, keyId: String = "KEY1234567", clientId: String = "com.example.web") throws -> IdentityProvider {
        let sealed = try masterKey.seal(key.serialized, context: IdentityProvider.appleKeyContext(realm: "demo", alias: "apple"))
        return IdentityProvider(
            realm: "demo", alias: "apple", kind: .apple, issuer: IdentityProviderService.appleIssuer, clientId: clientId, sealedClientSecret: nil,
            scopes: ["name", "email"], displayName: "Apple", endpoints: IdentityProviderService.presetEndpoints(.apple),
            appleKey: .init(teamId: "TEAM123456", keyId: keyId, sealedPrivateKey: sealed), createdAt: start
        )
    }

    private func verified(_ secret: String, key: SigningKey, at now: Date) throws -> VerifiedJWT {
        let policy = JWTVerificationPolicy(
            allowedAlgorithms: [.es256], keys: .single(key.publicJWK), requiredClaims: ["iss", "sub", "aud", "iat", "exp"],
            issuer: "TEAM123456", audience: "https://appleid.apple.com", leeway: 0, maxLifetime: 15_777_000
        )
        return try JWTVerifier.verify(secret, policy: policy, now: now)
    }

    func testTheSecretCarriesAppleClaimsAndIsSignedWithTheTeamKey() throws {
        let key = try SigningKey.generate(.es256)
        let clock = TestClock(start)
        let secret = try AppleClientSecrets(masterKey: masterKey, clock: clock).secret(for: try provider(key: key))
        let jwt = try verified(secret, key: key, at: start)
        XCTAssertEqual(jwt.header.string("alg"), "ES256")
        XCTAssertEqual(jwt.header.string("kid"), "KEY1234567")
        XCTAssertEqual(jwt.claims.string("iss"), "TEAM123456")
        XCTAssertEqual(jwt.claims.string("sub"), "com.example.web")
        XCTAssertEqual(jwt.claims.string("aud"), "https://appleid.apple.com")
        XCTAssertEqual(jwt.claims["iat"]?.numberValue, start.timeIntervalSince1970)
        let lifetime = try XCTUnwrap(jwt.claims["exp"]?.numberValue) - start.timeIntervalSince1970
        XCTAssertEqual(lifetime, AppleClientSecrets.lifetime)
        XCTAssertLessThanOrEqual(lifetime, 15_777_000, "Apple refuses secrets living longer than six months")
        XCTAssertEqual(Set(jwt.claims.keys), ["iss", "sub", "aud", "iat", "exp"])

        let other = try SigningKey.generate(.es256)
        XCTAssertThrowsError(try verified(secret, key: other, at: start), "another key's signature does not verify")
    }

    func testTheSecretIsKeptWhileYoungAndRenewedAtHalfItsLife() throws {
        let key = try SigningKey.generate(.es256)
        let clock = TestClock(start)
        let secrets = AppleClientSecrets(masterKey: masterKey, clock: clock)
        let apple = try provider(key: key)
        let first = try secrets.secret(for: apple)
        clock.advance(by: AppleClientSecrets.renewalAge - 1)
        XCTAssertEqual(try secrets.secret(for: apple), first, "a young secret is reused, not signed again")

        clock.advance(by: 1)
        let renewed = try secrets.secret(for: apple)
        XCTAssertNotEqual(renewed, first)
        let jwt = try verified(renewed, key: key, at: clock.now())
        XCTAssertEqual(jwt.claims["iat"]?.numberValue, clock.now().timeIntervalSince1970)
        XCTAssertGreaterThan(AppleClientSecrets.lifetime - AppleClientSecrets.renewalAge, 3600, "renewed hours before it expires")
        XCTAssertEqual(try secrets.secret(for: apple), renewed)

        // A changed key id or client id (the provider removed and added again) is a new secret at once.
        let rekeyed = try secrets.secret(for: try provider(key: key, keyId: "KEY7654321"))
        XCTAssertEqual(try verified(rekeyed, key: key, at: clock.now()).header.string("kid"), "KEY7654321")
        let moved = try secrets.secret(for: try provider(key: key, clientId: "com.example.other"))
        XCTAssertEqual(try verified(moved, key: key, at: clock.now()).claims.string("sub"), "com.example.other")

        // A clock set back before the cached secret's iat makes a new one rather than a secret from the future.
        clock.set(start.addingTimeInterval(-60))
        XCTAssertEqual(try verified(try secrets.secret(for: apple), key: key, at: clock.now()).claims["iat"]?.numberValue, clock.now().timeIntervalSince1970)
    }

    func testAKeySealedForAnotherRowOrMasterKeyIsAMisconfiguredProvider() throws {
        let key = try SigningKey.generate(.es256)
        var moved = try provider(key: key)
        moved.alias = "other"
        for (label, secrets, apple) in [
            ("another row", AppleClientSecrets(masterKey: masterKey, clock: TestClock(start)), moved),
            ("another master key", AppleClientSecrets(masterKey: MasterKey.generate(), clock: TestClock(start)), try provider(key: key)),
        ] {
            XCTAssertThrowsError(try secrets.secret(for: apple), label) { error in
                XCTAssertEqual((error as? SignInFailure)?.code, .providerMisconfigured, label)
            }
        }
    }
}

/// Apple's refresh token is kept only sealed, bound to its identity: a value copied to another identity's row does not
/// open there.
final class AppleRevocationTokenTests: XCTestCase {
    func testTheSealedTokenOpensOnlyForItsIdentity() throws {
        let key = try MasterKey(bytes: Array(repeating: 9, count: 32))
        let sealed = try AppleTokenRevocation.seal("r.secret-refresh", realm: "demo", issuer: "https://appleid.apple.com", subject: "001.a", masterKey: key)
        XCTAssertFalse(sealed.contains("secret-refresh"))
        XCTAssertEqual(try AppleTokenRevocation.open(sealed, realm: "demo", issuer: "https://appleid.apple.com", subject: "001.a", masterKey: key), "r.secret-refresh")
        XCTAssertThrowsError(try AppleTokenRevocation.open(sealed, realm: "demo", issuer: "https://appleid.apple.com", subject: "001.b", masterKey: key))
        XCTAssertThrowsError(try AppleTokenRevocation.open(sealed, realm: "other", issuer: "https://appleid.apple.com", subject: "001.a", masterKey: key))
    }
}
