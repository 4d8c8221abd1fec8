/// Migration 1, Accounts' share (the second piece, after OAuth's realms): the `users` table.
enum UsersSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 1, name: "initial schema", order: 1) { _ in
        [
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
        ]
    }
}
