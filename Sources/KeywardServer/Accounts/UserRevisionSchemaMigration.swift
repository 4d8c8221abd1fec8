/// Migration 21, Accounts' share: a user's revision, one more at every change of the row, which the admin API
/// answers as the user's `ETag` and compares in the same statement as an update (`If-Match`, issue 33).
enum UserRevisionSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 21, name: "administration over HTTP: admin scopes, user revisions", order: 1) { _ in
        ["ALTER TABLE users ADD COLUMN revision BIGINT NOT NULL DEFAULT 1"]
    }
}
