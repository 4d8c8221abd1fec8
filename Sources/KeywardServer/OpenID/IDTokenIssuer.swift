// The id_token: who signed in, how and when, for the app that asked (OpenID Connect Core §2, §3.1.3.6).
import Foundation
import KeywardJOSE

/// Signs id_tokens with the realm's active key, the key its JWKS publishes.
struct IDTokenIssuer: Sendable {
    let realms: RealmService
    let keys: RealmKeyService

    struct Subject: Sendable {
        let userId: String
        let clientId: String
        let nonce: String?
        let authTime: Date
        let amr: [String]
        let acr: String
        /// The app's session (its refresh-token family), as its access tokens name it.
        let sessionId: String
    }

    func issue(realm: Realm, for subject: Subject, accessToken: String, now: Date) async throws -> String {
        let signer = try await keys.activeSigner(realm: realm.name)
        let issuedAt = now.timeIntervalSince1970.rounded(.down)
        var claims: JSONObject = [
            "iss": .string(realms.issuer(of: realm.name)),
            "sub": .string(subject.userId),
            "aud": .string(subject.clientId),
            "azp": .string(subject.clientId),
            "iat": .number(issuedAt),
            "exp": .number(issuedAt + Double(realm.accessTokenLifetime)),
            "auth_time": .number(subject.authTime.timeIntervalSince1970.rounded(.down)),
            "amr": .array(subject.amr.map { .string($0) }),
            "acr": .string(subject.acr),
            "sid": .string(subject.sessionId),
            "at_hash": .string(TokenHash.leftHalf(of: accessToken, algorithm: signer.key.algorithm)),
        ]
        if let nonce = subject.nonce { claims["nonce"] = .string(nonce) }
        return try JWS.sign(header: ["typ": .string("JWT"), "kid": .string(signer.kid)], claims: claims, key: signer.key)
    }
}
