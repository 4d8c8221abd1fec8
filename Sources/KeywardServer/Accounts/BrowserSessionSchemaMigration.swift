/// Migration 3: browser sessions of the login, push-wait, enrollment and account pages.
enum BrowserSessionSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 3, name: "browser sessions") { _ in
        [
            """
            CREATE TABLE browser_sessions (
                id_hash TEXT PRIMARY KEY,
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                user_id TEXT,
                stage TEXT NOT NULL,
                csrf_token TEXT NOT NULL,
                return_to TEXT,
                client_id TEXT,
                challenge_id TEXT,
                challenge_secret TEXT,
                enrollment_id TEXT,
                enrollment_secret TEXT,
                created_at BIGINT NOT NULL,
                last_seen_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX browser_sessions_expires_at ON browser_sessions (expires_at)",
        ]
    }
}
