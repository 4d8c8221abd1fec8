/// Migration 14: replay entries lose their expiry index. Keys expiring in the same second (host-token `exp` and
/// DPoP `iat` are whole seconds) sorted by key inside it, so every recorded key dirtied a random page of the index
/// as well as one of the table: on SQLite, about a third of a replay write's cost. The sweep now walks the table in
/// key order a thousand rows per statement (`SQLReplayStore.deleteExpired`), which also costs less than deleting
/// through the index did.
enum ReplaySweepSchemaMigration {
    static let migration = SchemaMigration(version: 14, name: "replay entries: no expiry index, swept in key order") { _ in
        ["DROP INDEX IF EXISTS replay_entries_expires_at"]
    }
}
