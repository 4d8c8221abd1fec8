/// Migration 12: the Apple refresh token of each Sign in with Apple identity, sealed under the master key, so that
/// deleting the account (or unlinking Apple) can revoke it at Apple (App Store rule 5.1.1(v)); and the claim a
/// provider's new users take their username from.
enum AppleRevocationSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 12, name: "apple refresh tokens for revocation, username claims") { _ in
        [
            "ALTER TABLE external_identities ADD COLUMN revocation_token TEXT",
            "ALTER TABLE identity_providers ADD COLUMN username_claim TEXT",
        ]
    }
}
