/// Migration 8, host tokens' share (the first piece): the issuers. Accounts declares the external identities of
/// users (`ExternalIdentitySchemaMigration`) and OAuth public clients (`PublicClientSchemaMigration`) as the later
/// pieces of the same migration.
enum HostTokenSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 8, name: "host-token issuers, external identities, public clients") { _ in
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
        ]
    }
}
