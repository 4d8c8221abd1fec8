// Issuing and verifying the realm-signed JWT access tokens.
import Foundation
import KeywardJOSE

/// Issues and verifies the realm-signed JWT access tokens (RFC 9068 profile, `typ: at+jwt`).
public struct AccessTokenIssuer: Sendable {
    /// Clock skew tolerated when checking `exp`/`iat` of our own tokens, and added to the time a retired key stays published.
    public static let verificationLeeway: TimeInterval = 30
    public static let tokenType = "at+jwt"

    let realms: RealmService
    let keys: RealmKeyService

    public struct Issued: Sendable {
        public let token: String
        public let expiresIn: Int
    }

    /// `extraClaims` never replace the token's own (`iss`, `sub`, `exp`, …).
    func issue(realm: Realm, clientId: String, subject: String, scope: String, jkt: String?, now: Date, extraClaims: JSONObject = [:]) async throws -> Issued {
        let signer = try await keys.activeSigner(realm: realm.name)
        let issuedAt = Int64(now.timeIntervalSince1970)
        let issuer = realms.issuer(of: realm.name)
        var claims: JSONObject = [
            "iss": .string(issuer),
            "aud": .string(issuer),
            "sub": .string(subject),
            "azp": .string(clientId),
            "client_id": .string(clientId),
            "iat": .number(Double(issuedAt)),
            "exp": .number(Double(issuedAt + Int64(realm.accessTokenLifetime))),
            "jti": .string(Base64URL.encode(SecureRandom.bytes(16))),
        ]
        claims.merge(extraClaims) { own, _ in own }
        if !scope.isEmpty { claims["scope"] = .string(scope) }
        if let jkt { claims["cnf"] = .object(["jkt": .string(jkt)]) }
        let header: JSONObject = ["typ": .string(Self.tokenType), "kid": .string(signer.kid)]
        let token = try JWS.sign(header: header, claims: claims, key: signer.key)
        return Issued(token: token, expiresIn: realm.accessTokenLifetime)
    }

    /// Verifies a token this realm issued: signature by a published key, `typ`, issuer, audience, expiry.
    func verify(_ token: String, realm: Realm, now: Date) async throws -> VerifiedJWT {
        // Parsed once: the unverified header only picks the key set; JWTVerifier checks everything against it.
        let parsed = try UnverifiedJWT(token)
        let kid = parsed.jws.header["kid"]?.stringValue
        let keySet = try await keys.publishedKeys(realm: realm.name, toVerify: kid)
        let issuer = realms.issuer(of: realm.name)
        let policy = JWTVerificationPolicy(
            allowedAlgorithms: Set(RealmKeyService.supportedAlgorithms),
            keys: .set(keySet),
            expectedType: Self.tokenType,
            requiredClaims: ["exp", "iat", "sub", "jti"],
            issuer: issuer,
            audience: issuer,
            leeway: Self.verificationLeeway,
            maxLifetime: 86400
        )
        return try JWTVerifier.verify(parsed: parsed, policy: policy, now: now)
    }
}
