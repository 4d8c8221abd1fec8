/// Migration 8, Accounts' share (the second piece): the external identities of users, written for host-token
/// enrolment and for the identity providers of social sign-in alike.
enum ExternalIdentitySchemaMigration {
    static let piece = SchemaMigration.Piece(version: 8, name: "host-token issuers, external identities, public clients", order: 1) { _ in
        [
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
        ]
    }
}
