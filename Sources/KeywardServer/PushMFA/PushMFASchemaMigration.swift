/// Migration 2, push MFA's share: device credentials, challenges, enrollment request handles, wait-challenge state,
/// per-realm settings. Core declares the audit table of the same migration (`AuditSchemaMigration`).
enum PushMFASchemaMigration {
    static let piece = SchemaMigration.Piece(version: 2, name: "push MFA and audit events") { _ in
        [
            """
            CREATE TABLE push_credentials (
                id TEXT PRIMARY KEY,
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                user_id TEXT NOT NULL,
                credential_id TEXT NOT NULL,
                device_id TEXT NOT NULL,
                device_type TEXT NOT NULL,
                device_label TEXT NOT NULL,
                public_key_jwk TEXT NOT NULL,
                push_provider_id TEXT NOT NULL,
                push_provider_type TEXT NOT NULL,
                push_token_valid BOOLEAN NOT NULL,
                created_at BIGINT NOT NULL,
                last_used_at BIGINT,
                CONSTRAINT push_credentials_device UNIQUE (realm, user_id, device_id)
            )
            """,
            """
            CREATE TABLE push_challenges (
                id TEXT PRIMARY KEY,
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                user_id TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('ENROLLMENT', 'AUTHENTICATION')),
                status TEXT NOT NULL,
                nonce TEXT NOT NULL,
                credential_id TEXT,
                client_id TEXT,
                session_id TEXT,
                watch_secret_hash TEXT NOT NULL,
                uv_mode TEXT NOT NULL,
                uv_value TEXT,
                uv_options TEXT,
                uv_failures INTEGER NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                resolved_at BIGINT
            )
            """,
            "CREATE INDEX push_challenges_user ON push_challenges (realm, user_id, kind, status)",
            "CREATE INDEX push_challenges_expires_at ON push_challenges (expires_at)",
            """
            CREATE TABLE push_enroll_requests (
                handle TEXT PRIMARY KEY,
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                user_id TEXT NOT NULL,
                challenge_id TEXT NOT NULL,
                expires_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX push_enroll_requests_expires_at ON push_enroll_requests (expires_at)",
            """
            CREATE TABLE push_wait_states (
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                user_id TEXT NOT NULL,
                challenge_count INTEGER NOT NULL,
                first_at BIGINT NOT NULL,
                last_at BIGINT NOT NULL,
                PRIMARY KEY (realm, user_id)
            )
            """,
            """
            CREATE TABLE push_mfa_settings (
                realm TEXT PRIMARY KEY REFERENCES realms (name) ON DELETE CASCADE,
                settings TEXT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
        ]
    }
}
