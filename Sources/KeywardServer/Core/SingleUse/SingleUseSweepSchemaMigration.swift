/// Migration 14: replay entries lose their expiry index. On SQLite, keys expiring in the same second (host-token
/// `exp` and DPoP `iat` are whole seconds) sorted by key inside it, so every recorded key dirtied a random page of
/// the index as well as one of the table: about a third of a replay write's cost. The sweep now walks the table in
/// key order a thousand rows per statement (`SQLSingleUseStore.deleteExpired`), which needs no such index on either
/// engine. On PostgreSQL, `DROP INDEX` locks the table for the moment it takes; nodes still running an older
/// release sweep with a full scan until they are replaced.
enum SingleUseSweepSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 14, name: "replay entries: no expiry index, swept in key order") { _ in
        ["DROP INDEX IF EXISTS replay_entries_expires_at"]
    }
}
