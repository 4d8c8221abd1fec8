// Test support: storage scenarios for migrations, transactions and connectivity, run on both database engines.
import Foundation
import SQLKit
import XCTest

@testable import KeywardServer

/// Migrations, transactions and connectivity; each runs on both engines (see the engine test classes).
enum DatabaseScenarios {
    /// Runs on an unmigrated database.
    static func migrateTwiceIsNoOp(_ database: KeywardDatabase) async throws {
        let migrator = Migrator(database: database, logger: StorageTestHarness.logger, migrations: SchemaMigration.all)
        let versions = SchemaMigration.all.map(\.version)
        try await StorageAssert.equal(await migrator.pendingMigrations().map(\.version), versions)
        try await StorageAssert.equal(await migrator.migrate(), versions)
        try await StorageAssert.equal(await migrator.migrate(), [])
        try await StorageAssert.equal(await migrator.pendingMigrations(), [])
        let recorded = try await database.sql.raw("SELECT version, name FROM keyward_schema_migrations").all()
        XCTAssertEqual(recorded.count, versions.count)
        XCTAssertEqual(try recorded.first?.decode(column: "name", as: String.self), "initial schema")
        // The schema is usable.
        try await SQLRealmStore(database: database).createRealm(StorageFixtures.realm("after-migrate"))
    }

    /// Runs on an unmigrated database: migration 10 marks the devices stored before it as attested only when their
    /// summary shows a verified attestation.
    static func deviceAttestedFlagIsDerivedFromTheSummary(_ database: KeywardDatabase) async throws {
        try await Migrator(database: database, logger: StorageTestHarness.logger, migrations: SchemaMigration.all.filter { $0.version <= 9 }).migrate()
        try await SQLRealmStore(database: database).createRealm(StorageFixtures.realm("demo"))
        try await database.sql.raw("""
            INSERT INTO device_apps (realm, app_id, platform, team_id, bundle_id, environment, missing_attestation, failed_attestation, dev_bypass, created_at)
            VALUES ('demo', 'app', 'ios', 'T', 'B', 'development', 'pending', 'pending', \(bind: true), 0)
            """).run()
        let summaries: [(id: String, status: String, summary: String, attested: Bool)] = [
            ("verified", "registered", #"{"environment":"development","keyId":"k","type":"app-attest"}"#, true),
            ("none", "registered", #"{"type":"none"}"#, false),
            ("failed", "registered", #"{"failed":"NONCE_MISMATCH","type":"app-attest"}"#, false),
            ("unreadable", "registered", #"{"type":"app-attest","unreadable":true}"#, false),
            ("bypass", "registered", #"{"dev_bypass":true,"type":"none"}"#, false),
            ("pending", "pending", #"{"type":"none"}"#, false),
            ("decided", "rejected", #"{"failed":"CHAIN_INVALID","type":"android-key"}"#, false),
        ]
        for (index, row) in summaries.enumerated() {
            try await database.sql.raw("""
                INSERT INTO devices (realm, app_id, device_id, public_key, key_thumbprint, platform, status, attestation, registered_at)
                VALUES ('demo', 'app', \(bind: row.id), 'key', \(bind: "thumbprint-\(index)"), 'ios', \(bind: row.status), \(bind: row.summary), 0)
                """).run()
        }
        try await StorageAssert.equal(await Migrator(database: database, logger: StorageTestHarness.logger, migrations: SchemaMigration.all).migrate().first, 10)
        for row in summaries {
            let stored = try await database.sql.raw("SELECT attested FROM devices WHERE device_id = \(bind: row.id)").first()
            XCTAssertEqual(try stored?.decode(column: "attested", as: Bool.self), row.attested, row.id)
        }
    }

    /// Runs on an unmigrated database: several migrators racing apply each migration once.
    static func concurrentMigratorsApplyOnce(_ database: KeywardDatabase) async throws {
        let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<4 {
                group.addTask { try await Migrator(database: database, logger: StorageTestHarness.logger, migrations: SchemaMigration.all).migrate() }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        XCTAssertEqual(applied.sorted(), SchemaMigration.all.map(\.version))
    }

    static func transactionCommitsOrRollsBack(_ database: KeywardDatabase) async throws {
        struct Boom: Error {}
        let realms = SQLRealmStore(database: database)
        do {
            try await database.transaction { session in
                try await session.raw("""
                    INSERT INTO realms (name, display_name, signing_algorithm, access_token_lifetime, demo, created_at)
                    VALUES ('rolled-back', 'x', 'ES256', 300, \(bind: false), 0)
                    """).run()
                throw Boom()
            }
            XCTFail("the transaction should have thrown")
        } catch is Boom {}
        try await StorageAssert.isNil(await realms.realm(named: "rolled-back"))

        let value = try await database.transaction { session in
            try await session.raw("""
                INSERT INTO realms (name, display_name, signing_algorithm, access_token_lifetime, demo, created_at)
                VALUES ('committed', 'x', 'ES256', 300, \(bind: true), 0)
                """).run()
            return 42
        }
        XCTAssertEqual(value, 42)
        try await StorageAssert.equal(await realms.realm(named: "committed")?.demo, true)
        // The connection is usable (not stuck in a transaction) after both outcomes.
        try await database.ping()
    }

    /// Transactions and single statements from many tasks at once do not interleave or deadlock.
    static func concurrentTransactionsStayIsolated(_ database: KeywardDatabase) async throws {
        let realms = SQLRealmStore(database: database)
        try await realms.createRealm(StorageFixtures.realm("busy"))
        let keys = SQLSigningKeyStore(database: database)
        try await keys.insertKey(StorageFixtures.key(realm: "busy", kid: "k0"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 1...10 {
                group.addTask {
                    let key = StorageFixtures.key(realm: "busy", kid: "k\(index)", createdAt: StorageFixtures.t0.storageShifted(Double(index)))
                    try await keys.rotate(realm: "busy", newKey: key, retiredPublishUntil: StorageFixtures.t0.storageShifted(3600))
                }
                group.addTask { _ = try await realms.listRealms() }
            }
            try await group.waitForAll()
        }
        let published = try await keys.publishedKeys(realm: "busy", now: StorageFixtures.t0)
        XCTAssertEqual(published.count, 11)
        XCTAssertEqual(published.filter { $0.status == .active }.count, 1)
    }

    static func pingAnswers(_ database: KeywardDatabase) async throws {
        try await database.ping()
        try await database.close()
        try await database.close()  // closing twice is harmless
    }
}
