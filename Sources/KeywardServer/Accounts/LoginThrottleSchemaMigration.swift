/// Migration 4: sign-in attempt counters shared by every node (the login throttle was per process before).
enum LoginThrottleSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 4, name: "login attempts") { _ in
        [
            """
            CREATE TABLE login_attempts (
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                username_hash TEXT NOT NULL,
                attempts INTEGER NOT NULL,
                window_start BIGINT NOT NULL,
                PRIMARY KEY (realm, username_hash)
            )
            """,
            "CREATE INDEX login_attempts_window_start ON login_attempts (window_start)",
        ]
    }
}
