/// Migration 24, SCIM's share: a realm's groups as its directory sends them, and their members (users of the realm;
/// a member goes with its user). A group may later map to roles (issue 33).
enum SCIMGroupSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 24, name: "SCIM groups") { _ in
        [
            """
            CREATE TABLE scim_groups (
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                id TEXT NOT NULL,
                display_name TEXT NOT NULL,
                display_name_folded TEXT NOT NULL,
                external_id TEXT,
                created_at BIGINT NOT NULL,
                revision BIGINT NOT NULL,
                PRIMARY KEY (realm, id)
            )
            """,
            "CREATE INDEX scim_groups_display_name ON scim_groups (realm, display_name_folded)",
            """
            CREATE TABLE scim_group_members (
                realm TEXT NOT NULL,
                group_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                PRIMARY KEY (realm, group_id, user_id),
                FOREIGN KEY (realm, group_id) REFERENCES scim_groups (realm, id) ON DELETE CASCADE,
                FOREIGN KEY (realm, user_id) REFERENCES users (realm, id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX scim_group_members_user ON scim_group_members (realm, user_id)",
        ]
    }
}
