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

