/// Migration 17, OAuth's share (before the broker's hand-offs): whether a client may use the broker (issue 29).
enum BrokerClientSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 17, name: "broker: broker clients and hand-offs") { _ in
        ["ALTER TABLE oauth_clients ADD COLUMN broker BOOLEAN NOT NULL DEFAULT FALSE"]
    }
}
