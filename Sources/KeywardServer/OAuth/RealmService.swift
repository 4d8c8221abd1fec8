// Realms: creating them with a first signing key, looking them up, and their issuer URLs.
import Foundation
import KeywardJOSE

/// Realms: creation (with a first signing key), lookup (cached briefly; realms rarely change) and the
/// URLs derived from the configured public base URL.
public final class RealmService: Sendable {
    private let store: any RealmStore
    private let keys: RealmKeyService
    private let clock: any KeywardClock
    private let publicURL: String
    private let cache = ShortLivedCache<String, Realm>(lifetime: 5)

    public init(store: any RealmStore, keys: RealmKeyService, clock: any KeywardClock, publicURL: String) {
        self.store = store
        self.keys = keys
        self.clock = clock
        self.publicURL = publicURL
    }

    public func issuer(of realm: String) -> String { "\(publicURL)/realms/\(realm)" }

    /// Creates a realm and its first signing key.
    public func createRealm(
        name: String, displayName: String? = nil, signingAlgorithm: String = "ES256",
        accessTokenLifetime: Int = 300, demo: Bool = false
    ) async throws -> Realm {
        guard RealmName.isValid(name) else { throw RealmError.invalidName(name) }
        let algorithm = try RealmKeyService.algorithm(named: signingAlgorithm)
        guard (30...86400).contains(accessTokenLifetime) else { throw RealmError.invalidLifetime(accessTokenLifetime) }
        let realm = Realm(
            name: name, displayName: displayName ?? name, signingAlgorithm: algorithm.rawValue,
            accessTokenLifetime: accessTokenLifetime, demo: demo, createdAt: clock.now()
        )
        do {
            try await store.createRealm(realm)
        } catch StoreError.conflict {
            throw RealmError.exists(name)
        }
        try await keys.insertFirstKey(realm: name, algorithm: algorithm)
        return realm
    }

    /// The realm, or nil when it does not exist.
    public func realm(named name: String) async throws -> Realm? {
        let now = clock.now()
        if let cached = cache.value(for: name, now: now) { return cached }
        guard RealmName.isValid(name), let realm = try await store.realm(named: name) else { return nil }
        cache.store(realm, for: name, now: now)
        return realm
    }

    public func listRealms() async throws -> [Realm] { try await store.listRealms() }
}

public enum RealmError: Error, CustomStringConvertible, Equatable {
    case invalidName(String)
    case invalidLifetime(Int)
    case exists(String)
    case notFound(String)

    public var description: String {
        switch self {
        case .invalidName(let name): "realm name '\(name)' is invalid: use 1-64 of a-z, 0-9, '-', '_', starting with a letter or digit"
        case .invalidLifetime(let seconds): "access token lifetime \(seconds) s is outside 30...86400"
        case .exists(let name): "realm '\(name)' exists already"
        case .notFound(let name): "realm '\(name)' does not exist"
        }
    }
}
