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
    }
}
