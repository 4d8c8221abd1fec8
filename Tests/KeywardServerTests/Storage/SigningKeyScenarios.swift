// Test support: storage scenarios for the signing key store (publish, rotate, delete), run on both engines.
import Foundation
import XCTest

@testable import KeywardServer

/// Signing key store; each runs on both engines.
enum SigningKeyScenarios {
    static let t0 = StorageFixtures.t0

    static func insertAndQuery(_ database: KeywardDatabase) async throws {
        try await SQLRealmStore(database: database).createRealm(StorageFixtures.realm("r1"))
        try await SQLRealmStore(database: database).createRealm(StorageFixtures.realm("r2"))
        let store = SQLSigningKeyStore(database: database)
        let now = t0.storageShifted(1000)

        try await StorageAssert.isNil(await store.activeKey(realm: "r1"))
        let active = StorageFixtures.key(realm: "r1", kid: "active", createdAt: t0.storageShifted(30))
        let stillPublished = StorageFixtures.key(
            realm: "r1", kid: "published", status: .retired, createdAt: t0.storageShifted(20), publishUntil: now.storageShifted(0.001)
        )
        let olderPublished = StorageFixtures.key(
            realm: "r1", kid: "older", status: .retired, createdAt: t0.storageShifted(10), publishUntil: now.storageShifted(60)
        )
        let expiresNow = StorageFixtures.key(realm: "r1", kid: "expires-now", status: .retired, createdAt: t0, publishUntil: now)
        let expired = StorageFixtures.key(
            realm: "r1", kid: "expired", status: .retired, createdAt: t0.storageShifted(40), publishUntil: now.storageShifted(-1)
        )
        for key in [olderPublished, expired, active, expiresNow, stillPublished] { try await store.insertKey(key) }
        try await store.insertKey(StorageFixtures.key(realm: "r2", kid: "other-realm", createdAt: t0.storageShifted(50)))

        try await StorageAssert.equal(await store.activeKey(realm: "r1"), active)
        // Newest first; retired keys only while publishUntil is after now; other realms never.
        try await StorageAssert.equal(await store.publishedKeys(realm: "r1", now: now), [active, stillPublished, olderPublished])
        try await StorageAssert.equal(await store.publishedKeys(realm: "unknown", now: now), [])

        await StorageAssert.throwsStoreError(.conflict("")) {
            try await store.insertKey(StorageFixtures.key(realm: "r1", kid: "second-active"))
        }
        await StorageAssert.throwsStoreError(.conflict("")) {
            try await store.insertKey(StorageFixtures.key(realm: "r1", kid: "active", status: .retired, publishUntil: now))
        }
        await StorageAssert.throwsStoreError(.notFound("")) {
            try await store.insertKey(StorageFixtures.key(realm: "no-realm", kid: "k"))
        }
    }

    static func rotateSwapsAtomically(_ database: KeywardDatabase) async throws {
        try await SQLRealmStore(database: database).createRealm(StorageFixtures.realm("r1"))
        let store = SQLSigningKeyStore(database: database)
        let first = StorageFixtures.key(realm: "r1", kid: "first", createdAt: t0)
        try await store.insertKey(first)

        let second = StorageFixtures.key(realm: "r1", kid: "second", createdAt: t0.storageShifted(60))
        let publishUntil = t0.storageShifted(660)
        try await store.rotate(realm: "r1", newKey: second, retiredPublishUntil: publishUntil)

        try await StorageAssert.equal(await store.activeKey(realm: "r1"), second)
        var retiredFirst = first
        retiredFirst.status = .retired
        retiredFirst.publishUntil = publishUntil
        try await StorageAssert.equal(await store.publishedKeys(realm: "r1", now: t0.storageShifted(120)), [second, retiredFirst])
        try await StorageAssert.equal(await store.publishedKeys(realm: "r1", now: publishUntil), [second])

        // A failing rotation (kid taken) changes nothing: the retire step is rolled back with it.
        let clash = StorageFixtures.key(realm: "r1", kid: "first", createdAt: t0.storageShifted(120))
        await StorageAssert.throwsStoreError(.conflict("")) {
            try await store.rotate(realm: "r1", newKey: clash, retiredPublishUntil: t0.storageShifted(999))
        }
        try await StorageAssert.equal(await store.activeKey(realm: "r1"), second)
        try await StorageAssert.equal(await store.publishedKeys(realm: "r1", now: t0.storageShifted(120)), [second, retiredFirst])

        await StorageAssert.throwsStoreError(.notFound("")) {
            try await store.rotate(realm: "no-realm", newKey: StorageFixtures.key(realm: "no-realm", kid: "k"), retiredPublishUntil: t0)
        }

        // Rotating a realm without keys just installs the active key.
        try await SQLRealmStore(database: database).createRealm(StorageFixtures.realm("fresh"))
        let only = StorageFixtures.key(realm: "fresh", kid: "only")
        try await store.rotate(realm: "fresh", newKey: only, retiredPublishUntil: t0)
        try await StorageAssert.equal(await store.activeKey(realm: "fresh"), only)
    }

    static func deleteUnpublishedKeys(_ database: KeywardDatabase) async throws {
        try await SQLRealmStore(database: database).createRealm(StorageFixtures.realm("r1"))
        let store = SQLSigningKeyStore(database: database)
        let now = t0.storageShifted(1000)
        try await store.insertKey(StorageFixtures.key(realm: "r1", kid: "active"))
        try await store.insertKey(StorageFixtures.key(realm: "r1", kid: "gone-1", status: .retired, publishUntil: now))
        try await store.insertKey(StorageFixtures.key(realm: "r1", kid: "gone-2", status: .retired, publishUntil: now.storageShifted(-5)))
        try await store.insertKey(StorageFixtures.key(realm: "r1", kid: "kept", status: .retired, publishUntil: now.storageShifted(5)))

        try await StorageAssert.equal(await store.deleteUnpublishedKeys(now: now), 2)
        try await StorageAssert.equal(await store.deleteUnpublishedKeys(now: now), 0)
        try await StorageAssert.equal(await store.publishedKeys(realm: "r1", now: t0).map(\.kid).sorted(), ["active", "kept"])
    }
}
