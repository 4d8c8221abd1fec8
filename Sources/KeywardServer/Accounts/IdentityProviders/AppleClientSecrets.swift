// Making and caching the ES256 JWT client secrets Sign in with Apple requires, renewed well before expiry.
import Foundation
import KeywardJOSE
import Synchronization

/// Sign in with Apple's client secret: not a stored string but an ES256 JWT Keyward signs with the team's .p8 key
/// (header `kid` = key id; `iss` team id, `sub` the client id, `aud` Apple, `iat`, `exp`). Apple accepts up to six
/// months; Keyward makes one a day and makes the next after half of that, so a secret in use always has hours
/// left (clock skew, a slow exchange) and one that leaks from a log is soon worthless. Cached per node and per
/// provider row: a changed key, key id, team or client id makes a new one at once.
final class AppleClientSecrets: Sendable {
    static let audience = "https://appleid.apple.com"
    static let lifetime: TimeInterval = 24 * 3600
    /// Renewed once this old, well before `lifetime`.
    static let renewalAge: TimeInterval = lifetime / 2

    private struct Entry {
        let key: IdentityProvider.AppleKey
        let clientId: String
        let secret: String
        let issuedAt: Date
    }

    private let masterKey: MasterKey
    private let clock: any KeywardClock
    private let cache = Mutex<[String: Entry]>([:])

    init(masterKey: MasterKey, clock: any KeywardClock) {
        self.masterKey = masterKey
        self.clock = clock
    }

    /// The client secret for `provider`'s token and revocation requests.
    func secret(for provider: IdentityProvider) throws(SignInFailure) -> String {
        guard let appleKey = provider.appleKey else {
            throw SignInFailure(.providerMisconfigured, "apple provider '\(provider.alias)' has no client-secret key")
        }
        let now = clock.now()
        let slot = provider.realm + "\u{0}" + provider.alias
        let cached = cache.withLock { $0[slot] }
        if let cached, cached.key == appleKey, cached.clientId == provider.clientId, now.timeIntervalSince(cached.issuedAt) < Self.renewalAge,
            cached.issuedAt <= now
        {
            return cached.secret
        }
        let signingKey: SigningKey
        do {
            let der = try masterKey.open(appleKey.sealedPrivateKey, context: IdentityProvider.appleKeyContext(realm: provider.realm, alias: provider.alias))
            signingKey = try SigningKey(algorithm: .es256, serialized: der)
        } catch {
            throw SignInFailure(.providerMisconfigured, "the Apple key of provider '\(provider.alias)' does not open under this master key")
        }
        let secret: String
        do {
            secret = try Self.make(teamId: appleKey.teamId, keyId: appleKey.keyId, clientId: provider.clientId, key: signingKey, now: now)
        } catch {
            throw SignInFailure(.providerMisconfigured, "the Apple client secret of provider '\(provider.alias)' cannot be signed: \(error)")
        }
        cache.withLock { $0[slot] = Entry(key: appleKey, clientId: provider.clientId, secret: secret, issuedAt: now) }
        return secret
    }

    /// One client secret, as Apple's "Creating a client secret" describes it; whole seconds, as JWT dates are.
    static func make(teamId: String, keyId: String, clientId: String, key: SigningKey, now: Date) throws(JOSEError) -> String {
        let issuedAt = now.timeIntervalSince1970.rounded(.down)
        return try JWS.sign(
            header: ["kid": .string(keyId), "typ": .string("JWT")],
            claims: [
                "iss": .string(teamId), "sub": .string(clientId), "aud": .string(audience), "iat": .number(issuedAt),
                "exp": .number(issuedAt + lifetime),
            ],
            key: key
        )
    }
}
