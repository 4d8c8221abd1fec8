/// Migration 22, SCIM's share: the bearer tokens a realm's directory (Entra ID, Okta) provisions users with. Only a
/// token's SHA-256 is kept; the token itself is shown once, when it is made (issue 33).
enum SCIMTokenSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 22, name: "SCIM directory tokens") { _ in
        [
            """
            CREATE TABLE scim_tokens (
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                id TEXT NOT NULL,
                name TEXT NOT NULL,
                token_hash TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (realm, id),
                CONSTRAINT scim_tokens_one_name UNIQUE (realm, name)
            )
            """,
        ]
    }
}
