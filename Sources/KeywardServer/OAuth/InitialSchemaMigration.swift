/// Migration 1: realms, signing keys, OAuth clients, users and the replay cache. It lives with the OAuth core
/// although `users` is Accounts' table: the first schema was written before the parts had folders, and a
/// migration that has run is never split.
///
/// Conventions: timestamps are BIGINT epoch milliseconds; booleans are BOOLEAN (PostgreSQL's bool,
/// SQLite stores 0/1); binary values are BLOB/BYTEA; every child row belongs to a realm and goes with it.
enum InitialSchemaMigration {
    static let migration = SchemaMigration(version: 1, name: "initial schema") { engine in
        let types = EngineColumnTypes(engine)
        // A composite text key is the whole row here: skip SQLite's hidden rowid b-tree.
        let replayTableSuffix = engine == .sqlite ? " WITHOUT ROWID" : ""
        return [
            """
            CREATE TABLE realms (
                name TEXT PRIMARY KEY,
                display_name TEXT NOT NULL,
                signing_algorithm TEXT NOT NULL,
                access_token_lifetime BIGINT NOT NULL,
                demo BOOLEAN NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE signing_keys (
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                kid TEXT NOT NULL,
                algorithm TEXT NOT NULL,
                public_jwk TEXT NOT NULL,
                sealed_private_key \(types.bytes) NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('active', 'retired')),
                created_at BIGINT NOT NULL,
                publish_until BIGINT,
                PRIMARY KEY (realm, kid)
            )
            """,
            // At most one active key per realm, enforced by the database rather than by callers.
            "CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (realm) WHERE status = 'active'",
            "CREATE INDEX signing_keys_retired_until ON signing_keys (publish_until) WHERE status = 'retired'",
            """
            CREATE TABLE oauth_clients (
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                secret_salt \(types.bytes) NOT NULL,
                secret_hash \(types.bytes) NOT NULL,
                require_dpop BOOLEAN NOT NULL,
                scope TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (realm, client_id)
            )
            """,
            """
            CREATE TABLE users (
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                id TEXT NOT NULL,
                username TEXT NOT NULL,
                password_hash TEXT,
                enabled BOOLEAN NOT NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (realm, id),
                CONSTRAINT users_realm_username UNIQUE (realm, username)
            )
            """,
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
