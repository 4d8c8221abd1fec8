/// Migration 15, OAuth's: what a client registers for the authorization endpoint (issue 28) — its redirect URIs and
/// post-logout redirect URIs (space-separated: a registered URI is printable ASCII without spaces, `RedirectURI`),
/// whether it is first-party (no consent page) and whether it must push its requests first (RFC 9126).
enum ClientRedirectSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 15, name: "client redirect URIs, first-party and PAR settings") { _ in
        [
            "ALTER TABLE oauth_clients ADD COLUMN redirect_uris TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE oauth_clients ADD COLUMN post_logout_redirect_uris TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE oauth_clients ADD COLUMN first_party BOOLEAN NOT NULL DEFAULT FALSE",
            "ALTER TABLE oauth_clients ADD COLUMN require_par BOOLEAN NOT NULL DEFAULT FALSE",
        ]
    }
}
