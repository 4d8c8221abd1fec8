/// Migration 23, Accounts' share: what a directory says about a user beside its name (SCIM, issue 33). A user's
/// profile (`user_profiles`: the external id, display and personal names as columns to filter on, the rest as JSON)
/// and its e-mail addresses (`user_emails`, one row each, to find a user by any of them), and the user name folded to
/// ASCII lowercase (`users.username_folded`), since SCIM compares user names and addresses without regard to case.
enum UserProfileSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 23, name: "user profiles and e-mail addresses") { engine in
        // ASCII only, alike on both engines: SQLite's lower() folds ASCII alone, PostgreSQL's follows the locale.
        let fold = engine == .postgres ? "translate(username, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')" : "lower(username)"
        return [
            "ALTER TABLE users ADD COLUMN username_folded TEXT",
            "UPDATE users SET username_folded = \(fold)",
            "CREATE INDEX users_username_folded ON users (realm, username_folded)",
            """
            CREATE TABLE user_profiles (
                realm TEXT NOT NULL,
                user_id TEXT NOT NULL,
                external_id TEXT,
                display_name TEXT,
                given_name TEXT,
                family_name TEXT,
                attributes TEXT NOT NULL,
                PRIMARY KEY (realm, user_id),
                FOREIGN KEY (realm, user_id) REFERENCES users (realm, id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX user_profiles_external_id ON user_profiles (realm, external_id)",
            """
            CREATE TABLE user_emails (
                realm TEXT NOT NULL,
                user_id TEXT NOT NULL,
                position INTEGER NOT NULL,
                value TEXT NOT NULL,
                value_folded TEXT NOT NULL,
                type TEXT,
                is_primary BOOLEAN NOT NULL,
                PRIMARY KEY (realm, user_id, position),
                FOREIGN KEY (realm, user_id) REFERENCES users (realm, id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX user_emails_value ON user_emails (realm, value_folded)",
        ]
    }
}
