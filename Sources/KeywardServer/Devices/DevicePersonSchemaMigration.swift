/// Migration 20 (Devices' piece): one device, one key (issue 32). A registered device is found by its key's
/// thumbprint across the realm's apps (the token endpoint binds a person's tokens to it); it records the person who
/// signed in with it and when it was last seen; a removed device stays, refused everywhere, so its key cannot
/// register again; and a key a device rotated away from is remembered, so nothing is issued to it any more.
enum DevicePersonSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 20, name: "one device, one key: devices' people, removal, push on a registered device") { _ in
        [
            "ALTER TABLE devices ADD COLUMN user_id TEXT",
            "ALTER TABLE devices ADD COLUMN last_seen_at BIGINT",
            "ALTER TABLE devices ADD COLUMN removed_at BIGINT",
            "CREATE INDEX devices_by_key ON devices (realm, key_thumbprint)",
            "CREATE INDEX devices_by_user ON devices (realm, user_id) WHERE user_id IS NOT NULL",
            """
            CREATE TABLE device_retired_keys (
                realm TEXT NOT NULL,
                key_thumbprint TEXT NOT NULL,
                app_id TEXT NOT NULL,
                device_id TEXT NOT NULL,
                retired_at BIGINT NOT NULL,
                PRIMARY KEY (realm, key_thumbprint),
                FOREIGN KEY (realm, app_id) REFERENCES device_apps (realm, app_id) ON DELETE CASCADE
            )
            """,
        ]
    }
}
