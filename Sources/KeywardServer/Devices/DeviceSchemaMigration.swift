/// Migration 9: the apps whose installations register device keys, and the registered devices. A device is one
/// installation's hardware-backed key, with what its platform attested about it.
enum DeviceSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 9, name: "device apps and registered devices") { _ in
        [
            """
            CREATE TABLE device_apps (
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                app_id TEXT NOT NULL,
                platform TEXT NOT NULL CHECK (platform IN ('ios', 'android')),
                team_id TEXT,
                bundle_id TEXT,
                environment TEXT NOT NULL CHECK (environment IN ('development', 'production')),
                packages TEXT,
                signing_cert_digests TEXT,
                play_integrity_keys TEXT,
                play_integrity_google BOOLEAN NOT NULL DEFAULT FALSE,
                missing_attestation TEXT NOT NULL CHECK (missing_attestation IN ('reject', 'pending', 'accept')),
                failed_attestation TEXT NOT NULL CHECK (failed_attestation IN ('reject', 'pending', 'accept')),
                dev_bypass BOOLEAN NOT NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (realm, app_id),
                CONSTRAINT device_apps_platform_fields CHECK (
                    (platform = 'ios' AND team_id IS NOT NULL AND bundle_id IS NOT NULL)
                    OR (platform = 'android' AND packages IS NOT NULL)
                ),
                CONSTRAINT device_apps_bypass_not_in_production CHECK (NOT dev_bypass OR environment = 'development')
            )
            """,
            """
            CREATE TABLE devices (
                realm TEXT NOT NULL,
                app_id TEXT NOT NULL,
                device_id TEXT NOT NULL,
                public_key TEXT NOT NULL,
                key_thumbprint TEXT NOT NULL,
                platform TEXT NOT NULL CHECK (platform IN ('ios', 'android')),
                status TEXT NOT NULL CHECK (status IN ('registered', 'pending', 'rejected')),
                attestation TEXT NOT NULL,
                app_attest_key_id TEXT,
                app_attest_public_key TEXT,
                assertion_counter BIGINT,
                registered_at BIGINT NOT NULL,
                key_rotated_at BIGINT,
                PRIMARY KEY (realm, app_id, device_id),
                FOREIGN KEY (realm, app_id) REFERENCES device_apps (realm, app_id) ON DELETE CASCADE,
                CONSTRAINT devices_one_key UNIQUE (realm, app_id, key_thumbprint)
            )
            """,
        ]
    }
}
