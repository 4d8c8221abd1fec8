// Applying the numbered schema migrations in order, each once, even with several nodes starting together.
import Foundation
import Logging
import SQLKit

/// Applies numbered schema migrations, recorded in `keyward_schema_migrations`.
///
/// Each migration runs in its own transaction together with its bookkeeping row, so a failure leaves
/// the schema at the previous version. Several nodes may start at once on PostgreSQL: an advisory
/// lock serialises them and each re-checks inside the lock, so every migration runs exactly once.
public struct Migrator: Sendable {
    let database: KeywardDatabase
    let logger: Logger
    let migrations: [SchemaMigration]

    /// `migrations`: every migration Keyward knows (`SchemaMigration.all`, assembled from the parts in `App/`).
    public init(database: KeywardDatabase, logger: Logger, migrations: [SchemaMigration]) {
        self.database = database
        self.logger = logger
        self.migrations = migrations.sorted { $0.version < $1.version }
        precondition(Set(migrations.map(\.version)).count == migrations.count, "duplicate migration versions")
    }

    /// Applies every pending migration in order; returns the versions applied (empty when up to date).
    @discardableResult
    public func migrate() async throws -> [Int] {
        var applied: [Int] = []
        for migration in try await pendingMigrations() {
            let ran = try await StoreErrorMapping.mapping("migration \(migration.version) (\(migration.name))") {
                try await database.transaction { [engine = database.engine] session in
                    try await Self.lockAndPrepare(session, engine: engine)
                    // Another node may have applied it since we looked.
                    guard try await Self.appliedVersions(session).contains(migration.version) == false else { return false }
                    for statement in migration.statements(engine) {
                        try await session.raw(SQLQueryString(statement)).run()
                    }
                    try await session.raw("""
                        INSERT INTO keyward_schema_migrations (version, name, applied_at)
                        VALUES (\(bind: migration.version), \(bind: migration.name), \(bind: StorageTime.milliseconds(Date())))
                        """).run()
                    return true
                }
            }
            if ran {
                logger.info("applied schema migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
                applied.append(migration.version)
            }
        }
        return applied
    }

    /// Migrations not yet recorded in the database, in the order they would run.
    public func pendingMigrations() async throws -> [SchemaMigration] {
        let applied = try await StoreErrorMapping.mapping("reading the schema version") {
            try await database.transaction { [engine = database.engine] session in
                try await Self.lockAndPrepare(session, engine: engine)
                return try await Self.appliedVersions(session)
            }
        }
        if let newest = applied.max(), let known = migrations.last?.version, newest > known {
            logger.warning(
                "the database schema is newer than this Keyward build",
                metadata: ["databaseVersion": "\(newest)", "knownVersion": "\(known)"]
            )
        }
        return migrations.filter { !applied.contains($0.version) }
    }

    /// Serialises migrators across nodes (PostgreSQL; SQLite's BEGIN IMMEDIATE already does) and
    /// creates the bookkeeping table on first use.
    private static func lockAndPrepare(_ session: any SQLDatabase, engine: DatabaseEngine) async throws {
        if engine == .postgres {
            // A migration may rebuild a large table, and waiting for another node's migration counts as a statement:
            // neither is bounded by the connections' statement timeout (PostgresURL.statementTimeout).
            try await session.raw("SET LOCAL statement_timeout = 0").run()
            // Released automatically at COMMIT/ROLLBACK. The key is arbitrary but fixed: "keyw" in ASCII.
            try await session.raw("SELECT pg_advisory_xact_lock(\(literal: 0x6B65_7977))").run()
        }
        try await session.raw("""
            CREATE TABLE IF NOT EXISTS keyward_schema_migrations (
                version INTEGER PRIMARY KEY,
                name TEXT NOT NULL,
                applied_at BIGINT NOT NULL
            )
            """).run()
    }

    private static func appliedVersions(_ session: any SQLDatabase) async throws -> Set<Int> {
        let versions = try await session.raw("SELECT version FROM keyward_schema_migrations")
            .all(decodingColumn: "version", as: Int.self)
        return Set(versions)
    }
}
