/// Migration 20 (PushMFA's piece): a push credential created on a registered device's own key
/// (`POST …/v1/device/push-mfa`) names that device, whose attestation and removal then apply to its approvals;
/// QR-enrolled phones name none.
enum RegisteredDevicePushSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 20, name: "one device, one key: devices' people, removal, push on a registered device", order: 1) { _ in
        [
            "ALTER TABLE push_credentials ADD COLUMN registered_app_id TEXT",
            "ALTER TABLE push_credentials ADD COLUMN registered_device_id TEXT",
        ]
    }
}
