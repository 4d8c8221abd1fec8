/// Migration 1, Core's share (the last piece): the single-use records' table, `replay_entries`, and the expiry
/// index migration 14 dropped again.
enum SingleUseSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 1, name: "initial schema", order: 2) { engine in
        // A composite text key is the whole row here: skip SQLite's hidden rowid b-tree.
        let replayTableSuffix = engine == .sqlite ? " WITHOUT ROWID" : ""
        return [
            """
            CREATE TABLE replay_entries (
                scope TEXT NOT NULL,
                entry_key TEXT NOT NULL,
                expires_at BIGINT NOT NULL,
                PRIMARY KEY (scope, entry_key)
            )\(replayTableSuffix)
            """,
            "CREATE INDEX replay_entries_expires_at ON replay_entries (expires_at)",
        ]
    }
}
