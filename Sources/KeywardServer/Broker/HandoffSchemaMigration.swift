/// Migration 17, the broker's share (after OAuth's `broker` column): hand-offs waiting to be taken. One goes with
/// its realm and its client.
enum HandoffSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 17, name: "broker: broker clients and hand-offs", order: 1) { _ in
        [
            """
            CREATE TABLE broker_handoffs (
                code_hash TEXT PRIMARY KEY,
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                nonce_hash TEXT NOT NULL,
                jkt TEXT NOT NULL,
                kind TEXT NOT NULL,
                blob TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                FOREIGN KEY (realm, client_id) REFERENCES oauth_clients (realm, client_id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX broker_handoffs_client ON broker_handoffs (realm, client_id, expires_at)",
            "CREATE INDEX broker_handoffs_expires_at ON broker_handoffs (expires_at)",
        ]
    }
}
