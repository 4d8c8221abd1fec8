// Test support: storage scenarios for the realm, client and user stores, run on both database engines.
import Foundation
import XCTest

@testable import KeywardServer

/// Realm, client and user stores; each runs on both engines.
enum AccountScenarios {
    static func realmStore(_ database: KeywardDatabase) async throws {
        let store = SQLRealmStore(database: database)
        var demo = StorageFixtures.realm("zeta")
        demo.demo = true
        demo.signingAlgorithm = "RS256"
        demo.accessTokenLifetime = 900
        try await store.createRealm(demo)
        try await store.createRealm(StorageFixtures.realm("alpha"))

        try await StorageAssert.equal(await store.realm(named: "zeta"), demo)
        try await StorageAssert.isNil(await store.realm(named: "missing"))
        try await StorageAssert.equal(await store.listRealms().map(\.name), ["alpha", "zeta"])
        await StorageAssert.throwsStoreError(.conflict("")) { try await store.createRealm(StorageFixtures.realm("alpha")) }
    }

    static func clientStore(_ database: KeywardDatabase) async throws {
        try await SQLRealmStore(database: database).createRealm(StorageFixtures.realm("r1"))
        try await SQLRealmStore(database: database).createRealm(StorageFixtures.realm("r2"))
        let store = SQLClientStore(database: database)
        let web = StorageFixtures.client(realm: "r1", clientId: "web", requireDPoP: false)
        try await store.createClient(StorageFixtures.client(realm: "r1", clientId: "mobile"))
        try await store.createClient(web)
        try await store.createClient(StorageFixtures.client(realm: "r2", clientId: "web"))

        try await StorageAssert.equal(await store.client(realm: "r1", clientId: "web"), web)
        try await StorageAssert.isNil(await store.client(realm: "r1", clientId: "nope"))
        try await StorageAssert.equal(await store.listClients(realm: "r1").map(\.clientId), ["mobile", "web"])
        try await StorageAssert.equal(await store.listClients(realm: "empty"), [])

        await StorageAssert.throwsStoreError(.conflict("")) { try await store.createClient(web) }
        await StorageAssert.throwsStoreError(.notFound("")) {
            try await store.createClient(StorageFixtures.client(realm: "no-such-realm", clientId: "x"))
        }

        try await store.deleteClient(realm: "r1", clientId: "web")
        try await StorageAssert.isNil(await store.client(realm: "r1", clientId: "web"))
        try await StorageAssert.isNotNil(await store.client(realm: "r2", clientId: "web"))
        await StorageAssert.throwsStoreError(.notFound("")) { try await store.deleteClient(realm: "r1", clientId: "web") }
    }

    static func userStore(_ database: KeywardDatabase) async throws {
        try await SQLRealmStore(database: database).createRealm(StorageFixtures.realm("r1"))
        try await SQLRealmStore(database: database).createRealm(StorageFixtures.realm("r2"))
        let store = SQLUserStore(database: database)
        let alice = StorageFixtures.user(realm: "r1", id: "u-1", username: "alice")
        let social = StorageFixtures.user(realm: "r1", id: "u-2", username: "bob", passwordHash: nil, enabled: false)
        try await store.createUser(alice)
        try await store.createUser(social)
        // Same username and id in another realm is a different user.
        try await store.createUser(StorageFixtures.user(realm: "r2", id: "u-1", username: "alice"))

        try await StorageAssert.equal(await store.user(realm: "r1", username: "alice"), alice)
        try await StorageAssert.equal(await store.user(realm: "r1", id: "u-2"), social)
        try await StorageAssert.isNil(await store.user(realm: "r1", username: "carol"))
        try await StorageAssert.isNil(await store.user(realm: "r2", id: "u-2"))
        try await StorageAssert.equal(await store.listUsers(realm: "r1").map(\.username), ["alice", "bob"])

        await StorageAssert.throwsStoreError(.conflict("")) {
            try await store.createUser(StorageFixtures.user(realm: "r1", id: "u-3", username: "alice"))
        }
        await StorageAssert.throwsStoreError(.conflict("")) {
            try await store.createUser(StorageFixtures.user(realm: "r1", id: "u-1", username: "alice2"))
        }
        await StorageAssert.throwsStoreError(.notFound("")) {
            try await store.createUser(StorageFixtures.user(realm: "nowhere", id: "u-9", username: "x"))
        }
        try await userPagesAndRevisions(store)
    }

    /// The admin API's reads and writes: pages in id order, exact prefixes on both engines, updates at a revision.
    private static func userPagesAndRevisions(_ store: SQLUserStore) async throws {
        for (id, name) in [("u-3", "Alina"), ("u-4", "aliné"), ("u-5", "ali%")] {
            try await store.createUser(StorageFixtures.user(realm: "r1", id: id, username: name))
        }
        try await StorageAssert.equal(await store.users(realm: "r1", query: UserQuery(limit: 2)).map(\.id), ["u-1", "u-2"])
        try await StorageAssert.equal(await store.users(realm: "r1", query: UserQuery(after: "u-2", limit: 2)).map(\.id), ["u-3", "u-4"])
        try await StorageAssert.equal(await store.users(realm: "r1", query: UserQuery(after: "u-5", limit: 2)).map(\.id), [])
        // Case-sensitive and literal: no LIKE wildcards, no folding (SQLite's LIKE would fold ASCII case).
        try await StorageAssert.equal(await store.users(realm: "r1", query: UserQuery(usernamePrefix: "ali")).map(\.username), ["alice", "aliné", "ali%"])
        try await StorageAssert.equal(await store.users(realm: "r1", query: UserQuery(usernamePrefix: "alin")).map(\.username), ["aliné"])
        try await StorageAssert.equal(await store.users(realm: "r1", query: UserQuery(usernamePrefix: "ali%")).map(\.username), ["ali%"])
        try await StorageAssert.equal(await store.users(realm: "r1", query: UserQuery(enabled: false)).map(\.username), ["bob"])

        try await StorageAssert.equal(await store.user(realm: "r1", id: "u-1")?.revision, 1)
        let renamed = try await store.updateUser(realm: "r1", id: "u-1", change: UserChange(username: "alice2"), expectedRevision: 1)
        guard case .updated(let user) = renamed else { return XCTFail("rename at revision 1: \(renamed)") }
        try await StorageAssert.equal(user.revision, 2)
        try await StorageAssert.equal(user.username, "alice2")
        try await StorageAssert.equal(await store.updateUser(realm: "r1", id: "u-1", change: UserChange(enabled: false), expectedRevision: 1), .stale(current: 2))
        try await StorageAssert.equal(await store.user(realm: "r1", id: "u-1")?.enabled, true)
        try await StorageAssert.equal(await store.updateUser(realm: "r1", id: "u-9", change: UserChange(enabled: false), expectedRevision: nil), .notFound)
        await StorageAssert.throwsStoreError(.conflict("")) {
            _ = try await store.updateUser(realm: "r1", id: "u-1", change: UserChange(username: "bob"), expectedRevision: nil)
        }
        // Every write of the row moves the revision, the ones made outside the admin API too.
        try await store.setPasswordHash("$2b$12$other", realm: "r1", id: "u-1")
        try await store.setEnabled(false, realm: "r1", id: "u-1")
        try await StorageAssert.equal(await store.user(realm: "r1", id: "u-1")?.revision, 4)
    }
}
