/// Migration 16, Accounts' share: when a session's last sign-in completed (`BrowserSession.signedInAt`), which the
/// authorization endpoint's `prompt=login` and `max_age` compare with, and the session's lasting id
/// (`BrowserSession.sid`), which survives the id changes of a sign-in and names the session to what an app holds
/// from it.
enum SessionSignInTimeSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 16, name: "OpenID Connect sign-in: sign-in times and refresh-token families") { _ in
        ["ALTER TABLE browser_sessions ADD COLUMN signed_in_at BIGINT", "ALTER TABLE browser_sessions ADD COLUMN sid TEXT"]
    }
}
