/// Migration 18, the broker's: each realm's broker settings (`BrokerSettings`), one JSON object per realm.
enum BrokerSettingsSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 18, name: "broker: realm settings") { _ in
        [
            """
            CREATE TABLE broker_settings (
                realm TEXT PRIMARY KEY REFERENCES realms (name) ON DELETE CASCADE,
                settings TEXT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
        ]
    }
}
