// The external_identities table: (issuer, subject) pairs naming a user, from host-token enrolment or an identity provider.
import Foundation
import SQLKit

public struct SQLExternalIdentityStore: ExternalIdentityStore {
    let database: KeywardDatabase

    public init(database: KeywardDatabase) {
        self.database = database
    }

    public func createIdentity(_ identity: ExternalIdentity) async throws {
        try await StoreErrorMapping.mapping(
            "createIdentity",
            conflict: "\(identity.issuer) subject '\(identity.subject)' is linked already in realm '\(identity.realm)'",
            missingParent: "user '\(identity.userId)' does not exist in realm '\(identity.realm)'"
        ) {
            try await Self.insert(identity, on: database.sql)
        }
    }

    public func createUser(_ user: User, with identity: ExternalIdentity) async throws {
        precondition(identity.realm == user.realm && identity.userId == user.id, "a new account's identity names its user")
        try await StoreErrorMapping.mapping(
            "createUser(with:)",
            conflict: "a user named '\(user.username)' exists already, or \(identity.issuer) subject '\(identity.subject)' is linked already, in realm '\(user.realm)'",
            missingParent: "realm '\(user.realm)' does not exist"
        ) {
            // One statement (the view's trigger inserts both rows; NewAccountSchemaMigration says why).
            try await database.sql.raw("""
                INSERT INTO new_accounts (\(unsafeRaw: NewAccountSchemaMigration.columns.joined(separator: ", ")))
                VALUES (\(bind: user.realm), \(bind: user.id), \(bind: user.username), \(bind: user.passwordHash), \(bind: user.enabled),
                    \(bind: StorageTime.milliseconds(user.createdAt)), \(bind: identity.kind.rawValue), \(bind: identity.issuer),
                    \(bind: identity.subject), \(bind: StorageTime.milliseconds(identity.createdAt)), \(bind: identity.details?.alias),
                    \(bind: identity.details?.email), \(bind: identity.details?.emailVerified), \(bind: identity.details?.name),
                    \(bind: identity.details?.lastLoginAt.map(StorageTime.milliseconds)), \(bind: identity.details?.revocationToken))
                """).run()
        }
    }

    public func user(realm: String, issuer: String, subject: String) async throws -> (identity: ExternalIdentity, user: User)? {
        try await StoreErrorMapping.mapping("user(realm:issuer:subject:)") {
            guard let row = try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns(from: "i")), \(unsafeRaw: SQLUserStore.columns(prefixed: "user_", from: "u"))
                FROM external_identities i JOIN users u ON u.realm = i.realm AND u.id = i.user_id
                WHERE i.realm = \(bind: realm) AND i.issuer = \(bind: issuer) AND i.subject = \(bind: subject)
                """).first() else { return nil }
            return (try Self.identity(from: row), try SQLUserStore.user(from: row, prefix: "user_"))
        }
    }

    public func identities(realm: String, userId: String) async throws -> [ExternalIdentity] {
        try await StoreErrorMapping.mapping("identities(realm:userId:)") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns(from: "i")) FROM external_identities i
                WHERE i.realm = \(bind: realm) AND i.user_id = \(bind: userId) ORDER BY i.issuer, i.subject
                """).all().map(Self.identity(from:))
        }
    }

    public func identities(realm: String, issuer: String) async throws -> [ExternalIdentity] {
        try await StoreErrorMapping.mapping("identities(realm:issuer:)") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns(from: "i")) FROM external_identities i
                WHERE i.realm = \(bind: realm) AND i.issuer = \(bind: issuer) ORDER BY i.subject
                """).all().map(Self.identity(from:))
        }
    }

    public func verifiedHolders(realm: String, email: String) async throws -> [(identity: ExternalIdentity, user: User)] {
        try await StoreErrorMapping.mapping("verifiedHolders(realm:email:)") {
            // The provider's trust is read now, not taken from when the identity was stored: an operator who stops
            // trusting a provider (remove, add again without it) withdraws what its identities said at once. TRUE is
            // written out for the reason SQLBrowserSessionStore.session gives.
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns(from: "i")), \(unsafeRaw: SQLUserStore.columns(prefixed: "user_", from: "u"))
                FROM external_identities i JOIN users u ON u.realm = i.realm AND u.id = i.user_id
                JOIN identity_providers p ON p.realm = i.realm AND p.alias = i.provider_alias AND p.issuer = i.issuer
                WHERE i.realm = \(bind: realm) AND i.email = \(bind: email) AND i.email_verified = TRUE
                AND p.trust_verified_email = TRUE AND p.kind <> 'facebook'
                ORDER BY i.created_at LIMIT 20
                """).all().map { row in (try Self.identity(from: row), try SQLUserStore.user(from: row, prefix: "user_")) }
        }
    }

    /// A sign-in without a name keeps the stored one: Apple sends the name on the first authorization only. Two
    /// statements and no transaction, since the two rows' times stand on their own: a returning sign-in is the
    /// common case, and this is all it writes before its session.
    public func recordSignIn(realm: String, issuer: String, subject: String, details: ExternalIdentity.ProviderDetails, at: Date) async throws -> User? {
        try await StoreErrorMapping.mapping("recordSignIn") {
            guard let userId = try await database.sql.raw("""
                UPDATE external_identities SET provider_alias = \(bind: details.alias), email = \(bind: details.email),
                    email_verified = \(bind: details.emailVerified),
                    display_name = COALESCE(\(bind: details.name), display_name),
                    revocation_token = COALESCE(\(bind: details.revocationToken), revocation_token),
                    last_login_at = \(bind: StorageTime.milliseconds(at))
                WHERE realm = \(bind: realm) AND issuer = \(bind: issuer) AND subject = \(bind: subject)
                RETURNING user_id
                """).first(decodingColumn: "user_id", as: String.self)
            else { return nil }
            return try await database.sql.raw("""
                UPDATE users SET last_login_at = \(bind: StorageTime.milliseconds(at)) WHERE realm = \(bind: realm) AND id = \(bind: userId)
                RETURNING \(unsafeRaw: SQLUserStore.columns)
                """).first().map(SQLUserStore.user(from:))
        }
    }

    public func deleteIdentities(realm: String, issuer: String, kind: ExternalIdentity.Kind) async throws -> Int {
        try await StoreErrorMapping.mapping("deleteIdentities") {
            try await database.sql.countingRows("""
                DELETE FROM external_identities
                WHERE realm = \(bind: realm) AND issuer = \(bind: issuer) AND kind = \(bind: kind.rawValue)
                RETURNING 1 AS deleted
                """)
        }
    }

    public func workingProviderIdentities(realm: String, userId: String) async throws -> Int {
        try await StoreErrorMapping.mapping("workingProviderIdentities") {
            try await database.sql.raw("""
                SELECT COUNT(*) AS n FROM external_identities i
                JOIN identity_providers p ON p.realm = i.realm AND p.alias = i.provider_alias AND p.issuer = i.issuer
                WHERE i.realm = \(bind: realm) AND i.user_id = \(bind: userId) AND i.kind = \(bind: ExternalIdentity.Kind.provider.rawValue)
                """).first(decodingColumn: "n", as: Int.self) ?? 0
        }
    }

    public func unlinkProviderIdentity(realm: String, userId: String, issuer: String, subject: String, waysInElsewhere: Int) async throws -> ProviderUnlink {
        try await StoreErrorMapping.mapping("unlinkProviderIdentity") {
            try await database.transaction { session in
                // The no-op update row-locks the user on PostgreSQL (SQLite's BEGIN IMMEDIATE already holds the
                // write lock), so a concurrent unlink of the user's other identity waits for this one's count.
                guard let hasPassword = try await session.raw("""
                    UPDATE users SET enabled = enabled WHERE realm = \(bind: realm) AND id = \(bind: userId)
                    RETURNING CASE WHEN password_hash IS NULL THEN 0 ELSE 1 END AS has_password
                    """).first(decodingColumn: "has_password", as: Int.self)
                else { return .notFound }
                // The other ways in that still work: identities at a provider the realm still has (a removed
                // provider's identities are kept, but sign no one in).
                let otherWays = try await session.raw("""
                    SELECT COUNT(*) AS n FROM external_identities i
                    JOIN identity_providers p ON p.realm = i.realm AND p.alias = i.provider_alias AND p.issuer = i.issuer
                    WHERE i.realm = \(bind: realm) AND i.user_id = \(bind: userId) AND i.kind = \(bind: ExternalIdentity.Kind.provider.rawValue)
                    AND NOT (i.issuer = \(bind: issuer) AND i.subject = \(bind: subject))
                    """).first(decodingColumn: "n", as: Int.self) ?? 0
                let deleted = try await session.countingRows("""
                    DELETE FROM external_identities
                    WHERE realm = \(bind: realm) AND user_id = \(bind: userId) AND kind = \(bind: ExternalIdentity.Kind.provider.rawValue)
                    AND issuer = \(bind: issuer) AND subject = \(bind: subject)
                    AND (\(bind: hasPassword) = 1 OR \(bind: otherWays) > 0 OR \(bind: waysInElsewhere) > 0)
                    RETURNING 1 AS deleted
                    """)
                if deleted > 0 { return .unlinked }
                let exists = try await session.raw("""
                    SELECT 1 AS found FROM external_identities
                    WHERE realm = \(bind: realm) AND user_id = \(bind: userId) AND kind = \(bind: ExternalIdentity.Kind.provider.rawValue)
                    AND issuer = \(bind: issuer) AND subject = \(bind: subject)
                    """).first() != nil
                return exists ? .lastWayIn : .notFound
            }
        }
    }

    private static func insert(_ identity: ExternalIdentity, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            INSERT INTO external_identities (realm, user_id, kind, issuer, subject, created_at, provider_alias, email, email_verified,
                display_name, last_login_at, revocation_token)
            VALUES (\(bind: identity.realm), \(bind: identity.userId), \(bind: identity.kind.rawValue), \(bind: identity.issuer),
                \(bind: identity.subject), \(bind: StorageTime.milliseconds(identity.createdAt)), \(bind: identity.details?.alias),
                \(bind: identity.details?.email), \(bind: identity.details?.emailVerified), \(bind: identity.details?.name),
                \(bind: identity.details?.lastLoginAt.map(StorageTime.milliseconds)), \(bind: identity.details?.revocationToken))
            """).run()
    }

    private static func columns(from table: String) -> String {
        [
            "realm", "user_id", "kind", "issuer", "subject", "created_at", "provider_alias", "email", "email_verified", "display_name", "last_login_at",
            "revocation_token",
        ].map { "\(table).\($0)" }.joined(separator: ", ")
    }

    private static func identity(from row: any SQLRow) throws -> ExternalIdentity {
        let kindName = try row.decode(column: "kind", as: String.self)
        guard let kind = ExternalIdentity.Kind(rawValue: kindName) else {
            throw StoreError.unavailable("external identity of unknown kind '\(kindName)'")
        }
        return ExternalIdentity(
            realm: try row.decode(column: "realm", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            kind: kind,
            issuer: try row.decode(column: "issuer", as: String.self),
            subject: try row.decode(column: "subject", as: String.self),
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            details: try row.decode(column: "provider_alias", as: String?.self).map { alias in
                ExternalIdentity.ProviderDetails(
                    alias: alias, email: try row.decode(column: "email", as: String?.self),
                    emailVerified: try row.decode(column: "email_verified", as: Bool?.self),
                    name: try row.decode(column: "display_name", as: String?.self),
                    lastLoginAt: try row.decode(column: "last_login_at", as: Int64?.self).map { StorageTime.date(milliseconds: $0) },
                    revocationToken: try row.decode(column: "revocation_token", as: String?.self)
                )
            }
        )
    }
}
