/// Migration 21, OAuth's share: the admin scopes a client holds (issue 33), space-separated `AdminScope` names.
enum AdminScopeSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 21, name: "administration over HTTP: admin scopes, user revisions") { _ in
        ["ALTER TABLE oauth_clients ADD COLUMN admin_scopes TEXT NOT NULL DEFAULT ''"]
    }
}
