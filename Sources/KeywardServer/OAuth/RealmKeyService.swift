// Realm signing keys: creating, rotating, the active signer and the published key set, briefly cached.
import Foundation
import KeywardJOSE
import Synchronization

/// Realm signing keys: creation, rotation, the active signer and the published key set.
/// Both are cached for a few seconds so the hot paths (token issuance, access-token checks) do not
/// unseal and parse keys on every request; a rotation made by another process shows within `cacheLifetime`.
public final class RealmKeyService: Sendable {
    public struct ActiveSigner: Sendable {
        public let kid: String
        public let key: SigningKey
    }

    public static let supportedAlgorithms: [JWSAlgorithm] = [.es256, .es384, .es512, .rs256, .ps256, .edDSA]

    private let store: any SigningKeyStore
    private let masterKey: MasterKey
    private let clock: any KeywardClock
    private let cacheLifetime: TimeInterval
    private let signers = Mutex<[String: (signer: ActiveSigner, loadedAt: Date)]>([:])
    private let keySets = Mutex<[String: (keys: JWKSet, loadedAt: Date)]>([:])
    /// When each realm's key set was last reloaded for an unknown kid.
    private let unknownKidReloads = Mutex<[String: Date]>([:])
    /// Tokens carrying made-up kids can make a node read its keys at most this often per realm.
    static let unknownKidReloadInterval: TimeInterval = 1

    public init(store: any SigningKeyStore, masterKey: MasterKey, clock: any KeywardClock, cacheLifetime: TimeInterval = 5) {
        self.store = store
        self.masterKey = masterKey
        self.clock = clock
        self.cacheLifetime = cacheLifetime
    }

    /// Generates a key and seals it; the caller decides whether it becomes active directly or via rotation.
    func makeKey(realm: String, algorithm: JWSAlgorithm) throws -> StoredSigningKey {
        let key = try SigningKey.generate(algorithm)
        var jwk = key.publicJWK
        let kid = jwk.thumbprint()
        jwk.kid = kid
        jwk.use = "sig"
        return StoredSigningKey(
            realm: realm,
            kid: kid,
            algorithm: algorithm.rawValue,
            publicJWK: String(decoding: StrictJSON.serialize(jwk.jsonObject), as: UTF8.self),
            sealedPrivateKey: try masterKey.seal(key.serialized, context: Self.sealContext(realm: realm, kid: kid)),
            status: .active,
            createdAt: clock.now()
        )
    }

    func insertFirstKey(realm: String, algorithm: JWSAlgorithm) async throws {
        try await store.insertKey(try makeKey(realm: realm, algorithm: algorithm))
        invalidate(realm: realm)
    }

    /// Makes a new key active. The previous key stays published until every token it signed has expired.
    @discardableResult
    public func rotate(realm: Realm, algorithm: JWSAlgorithm? = nil) async throws -> StoredSigningKey {
        let algorithm = try algorithm ?? Self.algorithm(named: realm.signingAlgorithm)
        let newKey = try makeKey(realm: realm.name, algorithm: algorithm)
        let publishUntil = clock.now().addingTimeInterval(TimeInterval(realm.accessTokenLifetime) + AccessTokenIssuer.verificationLeeway)
        try await store.rotate(realm: realm.name, newKey: newKey, retiredPublishUntil: publishUntil)
        invalidate(realm: realm.name)
        return newKey
    }

    public func activeSigner(realm: String) async throws -> ActiveSigner {
        let now = clock.now()
        if let cached = signers.withLock({ $0[realm] }), now.timeIntervalSince(cached.loadedAt) < cacheLifetime {
            return cached.signer
        }
        guard let stored = try await store.activeKey(realm: realm) else { throw RealmKeyError.noActiveKey(realm) }
        let algorithm = try Self.algorithm(named: stored.algorithm)
        let plaintext = try masterKey.open(stored.sealedPrivateKey, context: Self.sealContext(realm: realm, kid: stored.kid))
        let signer = ActiveSigner(kid: stored.kid, key: try SigningKey(algorithm: algorithm, serialized: plaintext))
        signers.withLock { $0[realm] = (signer, now) }
        return signer
    }

    /// The keys a verifier of this realm's tokens should trust right now (the JWKS document).
    public func publishedKeys(realm: String) async throws -> JWKSet {
        let now = clock.now()
        if let cached = keySets.withLock({ $0[realm] }), now.timeIntervalSince(cached.loadedAt) < cacheLifetime {
            return cached.keys
        }
        let stored = try await store.publishedKeys(realm: realm, now: now)
        let keys = try stored.map { try JWK(jsonString: $0.publicJWK) }
        let set = JWKSet(keys: keys)
        keySets.withLock { $0[realm] = (set, now) }
        return set
    }

    /// The published keys, for verifying a token whose header names `kid`. A kid the cached set lacks reloads the set
    /// at once (at most once per `unknownKidReloadInterval` per realm): another node may just have rotated that key in,
    /// and its tokens must not be refused until this node's cache expires.
    public func publishedKeys(realm: String, toVerify kid: String?) async throws -> JWKSet {
        let cached = try await publishedKeys(realm: realm)
        guard let kid, cached.key(withID: kid) == nil else { return cached }
        let now = clock.now()
        let mayReload = unknownKidReloads.withLock { reloads in
            if let last = reloads[realm], now.timeIntervalSince(last) < Self.unknownKidReloadInterval { return false }
            reloads[realm] = now
            return true
        }
        guard mayReload else { return cached }
        keySets.withLock { $0[realm] = nil }
        return try await publishedKeys(realm: realm)
    }

    public func listKeys(realm: String) async throws -> [StoredSigningKey] {
        try await store.publishedKeys(realm: realm, now: clock.now())
    }

    private func invalidate(realm: String) {
        signers.withLock { $0[realm] = nil }
        keySets.withLock { $0[realm] = nil }
    }

    static func algorithm(named name: String) throws -> JWSAlgorithm {
        guard let algorithm = JWSAlgorithm(rawValue: name), supportedAlgorithms.contains(algorithm) else {
            throw RealmKeyError.unsupportedAlgorithm(name)
        }
        return algorithm
    }

    private static func sealContext(realm: String, kid: String) -> String { "keyward/signing-key/\(realm)/\(kid)" }
}

public enum RealmKeyError: Error, CustomStringConvertible {
    case noActiveKey(String)
    case unsupportedAlgorithm(String)

    public var description: String {
        switch self {
        case .noActiveKey(let realm): "realm '\(realm)' has no active signing key"
        case .unsupportedAlgorithm(let name):
            "signing algorithm '\(name)' is not supported; use one of \(RealmKeyService.supportedAlgorithms.map(\.rawValue).joined(separator: ", "))"
        }
    }
}
