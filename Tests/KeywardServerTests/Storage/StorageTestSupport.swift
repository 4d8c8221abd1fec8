// Test support: runs storage tests on a fresh SQLite file or PostgreSQL schema; fixtures and async assertions.
import Foundation
import Logging
import XCTest

@testable import KeywardServer

/// Runs one storage test body against one engine, on a database of its own:
/// SQLite gets a fresh file in a temporary directory; PostgreSQL gets a fresh schema in the database named by
/// `KEYWARD_TEST_POSTGRES_URL` (dropped afterwards). Without that variable PostgreSQL tests are skipped,
/// except in CI (`CI=true`), where PostgreSQL is required.
enum StorageTestHarness {
    static let logger: Logger = {
        var logger = Logger(label: "keyward.storage.tests")
        logger.logLevel = .warning
        return logger
    }()

    static func run(
        _ engine: DatabaseEngine, migrated: Bool = true,
        file: StaticString = #filePath, line: UInt = #line,
        _ body: (KeywardDatabase) async throws -> Void
    ) async throws {
        switch engine {
        case .sqlite: try await runOnSQLite(migrated: migrated, body)
        case .postgres: try await runOnPostgres(migrated: migrated, file: file, line: line, body)
        }
    }

    private static func runOnSQLite(migrated: Bool, _ body: (KeywardDatabase) async throws -> Void) async throws {
        try await TestDatabase.withFreshDatabase(.sqlite) { url, _ in
            try await using(try DatabaseConfiguration(url: url), migrated: migrated, body)
        }
    }

    private static func runOnPostgres(
        migrated: Bool, file: StaticString, line: UInt, _ body: (KeywardDatabase) async throws -> Void
    ) async throws {
        guard TestDatabase.postgresURL != nil else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                XCTFail("PostgreSQL is required in CI: set KEYWARD_TEST_POSTGRES_URL", file: file, line: line)
                return
            }
            throw XCTSkip("KEYWARD_TEST_POSTGRES_URL is not set", file: file, line: line)
        }
        try await TestDatabase.withFreshDatabase(.postgres) { url, _ in
            try await using(try DatabaseConfiguration(url: url), migrated: migrated, body)
        }
    }

    private static func using(
        _ configuration: DatabaseConfiguration, migrated: Bool, _ body: (KeywardDatabase) async throws -> Void
    ) async throws {
        let database = try await KeywardDatabase.open(configuration, logger: logger)
        do {
            if migrated { try await Migrator(database: database, logger: logger, migrations: SchemaMigration.all).migrate() }
            try await body(database)
        } catch {
            try? await database.close()
            throw error
        }
        try await database.close()
    }
}

extension Date {
    /// `self` moved by `seconds`, as the date storage would give back (whole milliseconds), so fixtures compare
    /// equal after a round trip.
    func storageShifted(_ seconds: TimeInterval) -> Date {
        StorageTime.date(milliseconds: StorageTime.milliseconds(self) + Int64((seconds * 1000).rounded()))
    }
}

/// Fixtures with whole-millisecond timestamps (the storage precision).
enum StorageFixtures {
    static let t0 = StorageTime.date(milliseconds: 1_750_000_000_123)

    static func realm(_ name: String, createdAt: Date = t0) -> Realm {
        Realm(name: name, displayName: "Realm \(name)", signingAlgorithm: "ES256", accessTokenLifetime: 300, demo: false, createdAt: createdAt)
    }

    static func key(
        realm: String, kid: String, status: StoredSigningKey.Status = .active, createdAt: Date = t0, publishUntil: Date? = nil
    ) -> StoredSigningKey {
        StoredSigningKey(
            realm: realm, kid: kid, algorithm: "ES256", publicJWK: #"{"kty":"EC","kid":"\#(kid)"}"#,
            sealedPrivateKey: [0x00, 0xFF, 0x10, UInt8(kid.count)], status: status, createdAt: createdAt, publishUntil: publishUntil
        )
    }

    static func client(realm: String, clientId: String, requireDPoP: Bool = true) -> OAuthClient {
        OAuthClient(
            realm: realm, clientId: clientId, secretSalt: [0x00, 0x01, 0xFE, 0xFF], secretHash: Array(repeating: 0xAB, count: 32),
            requireDPoP: requireDPoP, scope: "read write", createdAt: t0
        )
    }

    static func user(realm: String, id: String, username: String, passwordHash: String? = "$2b$12$hash", enabled: Bool = true) -> User {
        User(id: id, realm: realm, username: username, passwordHash: passwordHash, enabled: enabled, createdAt: t0)
    }
}

/// Assertions for storage tests. XCTest's own take synchronous autoclosures on Linux; these evaluate an
/// async expression first.
enum StorageAssert {
    /// Asserts that `body` throws exactly `expected`'s case (messages are not compared).
    static func throwsStoreError(
        _ expected: StoreError, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            XCTFail("expected \(expected), nothing was thrown", file: file, line: line)
        } catch let error as StoreError {
            switch (expected, error) {
            case (.conflict, .conflict), (.notFound, .notFound), (.unavailable, .unavailable): break
            default: XCTFail("expected \(expected), got \(error)", file: file, line: line)
            }
        } catch {
            XCTFail("expected \(expected), got \(error)", file: file, line: line)
        }
    }

    static func equal<T: Equatable>(
        _ expression: @autoclosure () async throws -> T, _ expected: T, _ message: String = "",
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let value = try await expression()
        XCTAssertEqual(value, expected, message, file: file, line: line)
    }

    static func isTrue(_ expression: @autoclosure () async throws -> Bool, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) async throws {
        let value = try await expression()
        XCTAssertTrue(value, message, file: file, line: line)
    }

    static func isFalse(_ expression: @autoclosure () async throws -> Bool, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) async throws {
        let value = try await expression()
        XCTAssertFalse(value, message, file: file, line: line)
    }

    static func isNil<T>(_ expression: @autoclosure () async throws -> T?, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) async throws {
        let value = try await expression()
        XCTAssertNil(value, message, file: file, line: line)
    }

    static func isNotNil<T>(_ expression: @autoclosure () async throws -> T?, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) async throws {
        let value = try await expression()
        XCTAssertNotNil(value, message, file: file, line: line)
    }
}
