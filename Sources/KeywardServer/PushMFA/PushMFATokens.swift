// The realm-signed tokens of push MFA: enrollment and confirm tokens, and the secrets behind them.
import Crypto
import Foundation
import KeywardJOSE

/// The realm-signed tokens of push MFA (docs/PUSH-MFA-PROTOCOL.md §4.1, §4.3), signed with the realm's active key.
struct PushMFATokens: Sendable {
    let realms: RealmService
    let keys: RealmKeyService

    /// Realm → device, shown in the enrollment QR code. `aud` is the realm name, as in the original.
    func enrollmentToken(realm: String, user: User, challenge: PushChallenge, now: Date) async throws -> String {
        let claims: JSONObject = [
            "iss": .string(realms.issuer(of: realm)),
            "aud": .string(realm),
            "sub": .string(user.id),
            "username": .string(user.username),
            "realm": .string(realm),
            "enrollmentId": .string(challenge.id),
            "nonce": .string(challenge.nonce),
            "iat": .number(Self.seconds(now)),
            "exp": .number(Self.seconds(challenge.expiresAt)),
            "typ": "push-enroll-challenge",
        ]
        return try await sign(realm: realm, claims: claims)
    }

    /// Realm → device through the push provider. `typ` and `ver` are numbers; no `aud`, no user or client id
    /// (the app reads those from `/login/pending`). `userVerification` only in the same-device link variant.
    func confirmToken(realm: String, credential: PushCredential, challenge: PushChallenge, now: Date, includeUserVerification: Bool = false) async throws -> String {
        var claims: JSONObject = [
            "iss": .string(realms.issuer(of: realm)),
            "credId": .string(credential.credentialId),
            "typ": .number(1),
            "ver": .number(1),
            "cid": .string(challenge.id),
            "iat": .number(Self.seconds(now)),
            "exp": .number(Self.seconds(challenge.expiresAt)),
        ]
        if includeUserVerification, let expected = challenge.userVerification.expectedValue {
            claims["userVerification"] = .string(expected)
        }
        return try await sign(realm: realm, claims: claims)
    }

    private func sign(realm: String, claims: JSONObject) async throws -> String {
        let signer = try await keys.activeSigner(realm: realm)
        return try JWS.sign(header: ["kid": .string(signer.kid), "typ": "JWT"], claims: claims, key: signer.key)
    }

    static func seconds(_ date: Date) -> Double { date.timeIntervalSince1970.rounded(.down) }

    /// 32 random bytes in **standard** base64 without padding (43 characters; `+` and `/` possible).
    static func enrollmentNonce() -> String {
        Data(SecureRandom.bytes(32)).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    /// A capability secret: 32 random bytes, base64url.
    static func secret() -> String {
        Base64URL.encode(SecureRandom.bytes(32))
    }

    static func secretHash(_ secret: String) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Array(secret.utf8))))
    }
}
