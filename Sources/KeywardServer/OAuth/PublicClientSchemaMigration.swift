/// Migration 8, OAuth's share (the last piece): public clients (RFC 6749 §2.1: an app that holds no secret names
/// itself by `client_id` on the jwt-bearer grant).
enum PublicClientSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 8, name: "host-token issuers, external identities, public clients", order: 2) { _ in
        [
            "ALTER TABLE oauth_clients ADD COLUMN public_client BOOLEAN NOT NULL DEFAULT FALSE",
        ]
    }
}
