/// Migration 2, Core's share (after push MFA's tables, its first writer): the audit table every part writes its
/// security events to (`SQLAuditStore`).
enum AuditSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 2, name: "push MFA and audit events", order: 1) { _ in
        [
            """
            CREATE TABLE audit_events (
                id TEXT PRIMARY KEY,
                realm TEXT NOT NULL,
                event_type TEXT NOT NULL,
                user_id TEXT,
                client_id TEXT,
                details TEXT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX audit_events_realm_time ON audit_events (realm, created_at)",
        ]
    }
}
