/// Migration 19, the passkeys part's: each realm's passkey settings and the passkeys people registered.
enum PasskeySchemaMigration {
    static let piece = SchemaMigration.Piece(version: 19, name: "passkeys: settings and credentials") { _ in
        [
            """
            CREATE TABLE passkey_settings (
                realm TEXT PRIMARY KEY REFERENCES realms (name) ON DELETE CASCADE,
                settings TEXT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            // The public key is the COSE_Key as registered (§7.1 step 27), base64url. sign_count is the last counter
            // seen; a use updates it only from the value it read, so two racing uses of a counting authenticator
            // cannot both pass. No reference to users: the part removes a user's passkeys with them (a removal step).
            """
            CREATE TABLE passkeys (
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                credential_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                public_key TEXT NOT NULL,
                algorithm INTEGER NOT NULL,
                sign_count BIGINT NOT NULL,
                backup_eligible BOOLEAN NOT NULL,
                backed_up BOOLEAN NOT NULL,
                user_verified BOOLEAN NOT NULL,
                transports TEXT NOT NULL,
                aaguid TEXT NOT NULL,
                attestation_format TEXT NOT NULL,
                attestation_trusted BOOLEAN NOT NULL,
                name TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                last_used_at BIGINT,
                possibly_cloned_at BIGINT,
                PRIMARY KEY (realm, credential_id)
            )
            """,
            "CREATE INDEX passkeys_user ON passkeys (realm, user_id)",
        ]
    }
}
