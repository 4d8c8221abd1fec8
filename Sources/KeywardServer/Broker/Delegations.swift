// The delegation: a realm-signed JWT that lets the holder of one session key act for a person at one app.
import Foundation
import KeywardJOSE

/// Signs and verifies delegations (issue 29) with the realm's keys, the keys its JWKS publishes, so an app can
/// verify one offline. Explicitly typed (RFC 8725 §3.11) so it cannot pass for an access, ID or host token, nor they
/// for it.
struct Delegations: Sendable {
    let realms: RealmService
    let keys: RealmKeyService

    static let type = "keyward-delegation+jwt"
    /// The longest a delegation lasts; a realm may set less (`BrokerSettings.delegationLifetimeDays`).
    static let maxLifetime: TimeInterval = TimeInterval(BrokerSettings.delegationDays.upperBound) * 86400

    struct Grant: Sendable, Equatable {
        let userId: String
        let clientId: String
        let sessionKey: JWK
        let authTime: Date
        let amr: [String]
        let acr: String
        /// The app session it is kept as (`RefreshTokens.startSession`): ending that ends the delegation.
        let sessionId: String
    }

    func issue(_ grant: Grant, realm: String, lifetime: TimeInterval, now: Date) async throws -> String {
        let signer = try await keys.activeSigner(realm: realm)
        let issuedAt = now.timeIntervalSince1970.rounded(.down)
        let claims: JSONObject = [
            "iss": .string(realms.issuer(of: realm)), "sub": .string(grant.userId), "aud": .string(grant.clientId), "azp": .string(grant.clientId),
            "iat": .number(issuedAt), "exp": .number(issuedAt + min(lifetime, Self.maxLifetime)), "jti": .string(Base64URL.encode(SecureRandom.bytes(16))),
            "cnf": .object(["jwk": .object(grant.sessionKey.requiredMembers)]),
            "auth_time": .number(grant.authTime.timeIntervalSince1970.rounded(.down)), "amr": .array(grant.amr.map { .string($0) }),
            "acr": .string(grant.acr), "sid": .string(grant.sessionId),
        ]
        return try JWS.sign(header: ["typ": .string(Self.type), "kid": .string(signer.kid)], claims: claims, key: signer.key)
    }

    /// A delegation this realm issued to `clientId`, unexpired; its claims and the session key it names.
    func verify(_ token: String, realm: String, clientId: String, now: Date) async throws -> (claims: JSONObject, sessionKey: JWK) {
        let parsed = try UnverifiedJWT(token)
        let keySet = try await keys.publishedKeys(realm: realm, toVerify: parsed.jws.header["kid"]?.stringValue)
        let policy = JWTVerificationPolicy(
            allowedAlgorithms: Set(RealmKeyService.supportedAlgorithms), keys: .set(keySet), expectedType: Self.type,
            requiredClaims: ["exp", "iat", "sub", "jti", "cnf", "sid"], issuer: realms.issuer(of: realm), audience: clientId, leeway: 30,
            maxLifetime: Self.maxLifetime
        )
        let verified = try JWTVerifier.verify(parsed: parsed, policy: policy, now: now)
        guard case .object(let confirmation)? = verified.claims["cnf"], case .object(let jwk)? = confirmation["jwk"] else {
            throw JOSEError(.invalidClaim, "the delegation names no session key (cnf.jwk)")
        }
        return (verified.claims, try JWK(json: jwk))
    }
}
