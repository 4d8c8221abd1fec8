/// Migration 11: the identity providers a realm's people sign in with, what Keyward keeps of each provider identity
/// (the external-identity table host tokens introduced), when users last signed in, and how each browser session
/// signed in (for the account page's session list).
enum IdentityProviderSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 11, name: "identity providers, provider identities, session sign-in details") { _ in
        [
            """
            CREATE TABLE identity_providers (
                realm TEXT NOT NULL REFERENCES realms (name) ON DELETE CASCADE,
                alias TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('oidc', 'google', 'apple', 'facebook')),
                issuer TEXT NOT NULL,
                client_id TEXT NOT NULL,
                client_secret TEXT,
                scopes TEXT NOT NULL,
                display_name TEXT NOT NULL,
                trust_verified_email BOOLEAN NOT NULL,
                hosted_domain TEXT,
                apple_team_id TEXT,
                apple_key_id TEXT,
                apple_private_key TEXT,
                authorization_endpoint TEXT,
                token_endpoint TEXT,
                jwks_uri TEXT,
                userinfo_endpoint TEXT,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (realm, alias)
            )
            """,
            "ALTER TABLE external_identities ADD COLUMN provider_alias TEXT",
            "ALTER TABLE external_identities ADD COLUMN email TEXT",
            "ALTER TABLE external_identities ADD COLUMN email_verified BOOLEAN",
            "ALTER TABLE external_identities ADD COLUMN display_name TEXT",
            "ALTER TABLE external_identities ADD COLUMN last_login_at BIGINT",
            // E-mail addresses are stored lower-case, so the first sign-in of a new identity finds accounts with its
            // address through this index.
            "CREATE INDEX external_identities_email ON external_identities (realm, email)",
            "ALTER TABLE users ADD COLUMN last_login_at BIGINT",
            "ALTER TABLE browser_sessions ADD COLUMN amr TEXT",
            "ALTER TABLE browser_sessions ADD COLUMN user_agent TEXT",
            // When the user last proved who they are in this session (a first factor), for actions that ask for a
            // recent sign-in (deleting the account).
            "ALTER TABLE browser_sessions ADD COLUMN authenticated_at BIGINT",
        ]
    }
}
