/// Migration 10: whether a verified attestation vouched for each device's key, and indexes for the limits on
/// devices nothing vouched for (security review M1): pending devices per app, unattested registrations per hour.
enum DeviceAttestedSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 10, name: "devices: attested flag, pending and unattested indexes") { _ in
        [
            "ALTER TABLE devices ADD COLUMN attested BOOLEAN NOT NULL DEFAULT FALSE",
            // Rows stored before this migration: the attestation summary is compact JSON with sorted members; the
            // unattested ones are pending, or have no attestation, a failed or an unreadable one, or the
            // development bypass.
            """
            UPDATE devices SET attested = TRUE
            WHERE status <> 'pending' AND attestation <> '{"type":"none"}' AND attestation NOT LIKE '{"dev_bypass":%'
                AND attestation NOT LIKE '{"failed":%' AND attestation NOT LIKE '%"unreadable":true}'
            """,
            "CREATE INDEX devices_unattested ON devices (realm, app_id, registered_at) WHERE NOT attested",
            "CREATE INDEX devices_pending ON devices (realm, app_id, registered_at) WHERE status = 'pending'",
        ]
    }
}
