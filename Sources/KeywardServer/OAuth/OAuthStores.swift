// The OAuth core's store protocols: realms, signing keys, clients and the replay cache.
import Foundation

public protocol RealmStore: Sendable {
    /// Inserts a realm; throws `.conflict` when the name is taken.
    func createRealm(_ realm: Realm) async throws
    func realm(named name: String) async throws -> Realm?
    func listRealms() async throws -> [Realm]
}

public protocol SigningKeyStore: Sendable {
    func insertKey(_ key: StoredSigningKey) async throws
    /// All keys of the realm that are active, or retired with `publishUntil` after `now`, newest first.
    func publishedKeys(realm: String, now: Date) async throws -> [StoredSigningKey]
    /// The realm's active key (at most one), if any.
    func activeKey(realm: String) async throws -> StoredSigningKey?
    /// Atomically (one transaction): marks the current active key retired with `publishUntil`, and inserts `newKey` as active.
    func rotate(realm: String, newKey: StoredSigningKey, retiredPublishUntil: Date) async throws
    /// Deletes retired keys whose `publishUntil` is at or before `now`; returns how many were removed.
    func deleteUnpublishedKeys(now: Date) async throws -> Int
}

public protocol ClientStore: Sendable {
    /// Inserts a client; throws `.conflict` when (realm, clientId) exists.
    func createClient(_ client: OAuthClient) async throws
    func client(realm: String, clientId: String) async throws -> OAuthClient?
    func listClients(realm: String) async throws -> [OAuthClient]
    /// Throws `.notFound` when absent.
    func deleteClient(realm: String, clientId: String) async throws
}

/// One single-use value for `ReplayStore`: `key` under `scope`, remembered until `expiresAt`.
public struct ReplayEntry: Sendable, Equatable {
    public var scope: String
    public var key: String
    public var expiresAt: Date

    public init(scope: String, key: String, expiresAt: Date) {
        self.scope = scope
        self.key = key
        self.expiresAt = expiresAt
    }
}

/// A replay cache: a table with a unique key and an expiry, swept periodically.
public protocol ReplayStore: Sendable {
    /// Records `key` under `scope` until `expiresAt`. Returns false (and writes nothing) when the pair
    /// is already recorded and not yet expired. One atomic statement; never read-then-write.
    func recordOnce(scope: String, key: String, expiresAt: Date, now: Date) async throws -> Bool
    /// `recordOnce` for several entries in one statement: for each, whether this call recorded it. Each entry is
    /// recorded or refused on its own, as separate calls in order would: a pair repeated in `entries` is recorded
    /// at most for its first occurrence.
    func recordEachOnce(_ entries: [ReplayEntry], now: Date) async throws -> [Bool]
    /// Deletes entries that expired at or before `now`; returns how many were removed.
    func deleteExpired(now: Date) async throws -> Int
}
