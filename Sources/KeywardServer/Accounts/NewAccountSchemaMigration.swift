/// Migration 13: a new account in one statement — an INSERT into the view `new_accounts`, whose INSTEAD OF trigger
/// inserts the user (its last sign-in time included) and its first identity. A statement is atomic on both engines,
/// so a refused identity insert (a concurrent first sign-in of the same identity won) takes the user row with it,
/// as the transaction of BEGIN IMMEDIATE, two inserts and COMMIT did; but on SQLite that transaction held the only
/// write lock across four round trips, and every other write in the server waited in the busy handler meanwhile.
/// First sign-ins went from about 800 to 1,400 per second (docs/PERFORMANCE.md).
///
/// The view's columns are the two tables' columns that a new account sets; a column added to either table that a
/// new account must set needs a new migration that replaces the view and its trigger. A migration that rebuilds or
/// renames either table, or drops or retypes a column the view reads, must drop the view (and on PostgreSQL its
/// function) first and create them again after: both engines refuse the change while the view depends on it.
enum NewAccountSchemaMigration {
    /// The view's columns, in the order `SQLExternalIdentityStore.createUser(_:with:)` binds them.
    static let columns = [
        "realm", "user_id", "username", "password_hash", "enabled", "user_created_at",
        "kind", "issuer", "subject", "identity_created_at", "provider_alias", "email", "email_verified", "display_name",
        "last_login_at", "revocation_token",
    ]

    static let piece = SchemaMigration.Piece(version: 13, name: "a user and their first identity in one insert") { engine in
        let view = """
            CREATE VIEW new_accounts AS
            SELECT u.realm AS realm, u.id AS user_id, u.username AS username, u.password_hash AS password_hash,
                u.enabled AS enabled, u.created_at AS user_created_at, i.kind AS kind, i.issuer AS issuer,
                i.subject AS subject, i.created_at AS identity_created_at, i.provider_alias AS provider_alias,
                i.email AS email, i.email_verified AS email_verified, i.display_name AS display_name,
                i.last_login_at AS last_login_at, i.revocation_token AS revocation_token
            FROM users u JOIN external_identities i ON i.realm = u.realm AND i.user_id = u.id
            """
        let inserts = """
            INSERT INTO users (realm, id, username, password_hash, enabled, created_at, last_login_at)
            VALUES (NEW.realm, NEW.user_id, NEW.username, NEW.password_hash, NEW.enabled, NEW.user_created_at,
                NEW.last_login_at);
            INSERT INTO external_identities (realm, user_id, kind, issuer, subject, created_at, provider_alias, email,
                email_verified, display_name, last_login_at, revocation_token)
            VALUES (NEW.realm, NEW.user_id, NEW.kind, NEW.issuer, NEW.subject, NEW.identity_created_at,
                NEW.provider_alias, NEW.email, NEW.email_verified, NEW.display_name, NEW.last_login_at,
                NEW.revocation_token);
            """
        switch engine {
        case .sqlite:
            return [
                view,
                """
                CREATE TRIGGER new_accounts_insert INSTEAD OF INSERT ON new_accounts
                BEGIN
                \(inserts)
                END
                """,
            ]
        case .postgres:
            return [
                view,
                """
                CREATE FUNCTION keyward_insert_new_account() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                \(inserts)
                RETURN NEW;
                END
                $$
                """,
                """
                CREATE TRIGGER new_accounts_insert INSTEAD OF INSERT ON new_accounts
                FOR EACH ROW EXECUTE FUNCTION keyward_insert_new_account()
                """,
            ]
        }
    }
}
