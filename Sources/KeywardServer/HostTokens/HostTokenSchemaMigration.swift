/// Migration 8: host-token issuers, the external identities of users (written for host-token enrolment and for
/// the identity providers of social sign-in alike), and public OAuth clients (RFC 6749 §2.1: an app that holds
/// no secret names itself by `client_id` on the jwt-bearer grant).
enum HostTokenSchemaMigration {
    static let migration = SchemaMigration(version: 8, name: "host-token issuers, external identities, public clients") { _ in
        [
            """
            CREATE TABLE host_issuers (
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                issuer TEXT NOT NULL,
                jwks_url TEXT,
                pem_certificates TEXT,
                algorithms TEXT NOT NULL,
                max_lifetime BIGINT NOT NULL,
                leeway BIGINT NOT NULL,
                audience TEXT,
                require_jti BOOLEAN NOT NULL,
                allow_bearer BOOLEAN NOT NULL,
                clients TEXT,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (realm, issuer),
                CONSTRAINT host_issuers_one_key_source CHECK ((jwks_url IS NULL) <> (pem_certificates IS NULL))
            )
            """,
            """
            CREATE TABLE external_identities (
                realm TEXT NOT NULL,
                user_id TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('host-issuer', 'provider')),
                issuer TEXT NOT NULL,
                subject TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (realm, issuer, subject),
                FOREIGN KEY (realm, user_id) REFERENCES users (realm, id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX external_identities_user ON external_identities (realm, user_id)",
            "ALTER TABLE oauth_clients ADD COLUMN public_client BOOLEAN NOT NULL DEFAULT FALSE",
        ]
    }
}
