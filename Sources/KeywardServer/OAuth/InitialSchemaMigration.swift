/// Migration 1, OAuth's share (the first piece): realms, signing keys and OAuth clients. Accounts declares the
/// `users` table (`UsersSchemaMigration`) and Core the single-use records (`SingleUseSchemaMigration`) as the
/// later pieces of the same migration, in the order they always ran.
///
/// Conventions: timestamps are BIGINT epoch milliseconds; booleans are BOOLEAN (PostgreSQL's bool,
/// SQLite stores 0/1); binary values are BLOB/BYTEA; every child row belongs to a realm and goes with it.
enum InitialSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 1, name: "initial schema") { engine in
        let types = EngineColumnTypes(engine)
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
        ]
    }
}
