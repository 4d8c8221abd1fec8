/// Migration 16, OpenID's share (after Accounts' `signed_in_at`): refresh-token families. A family goes with its
/// realm, its client and its user.
enum RefreshFamilySchemaMigration {
    static let piece = SchemaMigration.Piece(version: 16, name: "OpenID Connect sign-in: sign-in times and refresh-token families", order: 1) { _ in
        [
            """
            CREATE TABLE oidc_refresh_families (
                id TEXT PRIMARY KEY,
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                session_id TEXT NOT NULL,
                scope TEXT NOT NULL,
                jkt TEXT,
                auth_time BIGINT NOT NULL,
                amr TEXT NOT NULL,
                acr TEXT NOT NULL,
                generation BIGINT NOT NULL,
                created_at BIGINT NOT NULL,
                last_used_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                revoked_at BIGINT,
                FOREIGN KEY (realm, client_id) REFERENCES oauth_clients (realm, client_id) ON DELETE CASCADE,
                FOREIGN KEY (realm, user_id) REFERENCES users (realm, id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX oidc_refresh_families_user ON oidc_refresh_families (realm, user_id)",
            "CREATE INDEX oidc_refresh_families_session ON oidc_refresh_families (session_id)",
            "CREATE INDEX oidc_refresh_families_expires_at ON oidc_refresh_families (expires_at)",
        ]
    }
}
