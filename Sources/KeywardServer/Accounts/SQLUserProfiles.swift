// The user_profiles and user_emails tables, and searching users with a `UserMatch`.
import Foundation
import SQLKit

/// A profile to store with its user's key.
struct NewProfile: Sendable {
    let realm: String
    let userId: String
    let profile: UserProfile
}

extension SQLUserStore {
    /// Writes `profile` as the user's whole profile (an empty one removes it), on a transaction's session.
    static func writeProfile(_ profile: UserProfile, realm: String, userId: String, on sql: any SQLDatabase) async throws {
        try await sql.raw("DELETE FROM user_emails WHERE realm = \(bind: realm) AND user_id = \(bind: userId)").run()
        guard !profile.isEmpty else {
            try await sql.raw("DELETE FROM user_profiles WHERE realm = \(bind: realm) AND user_id = \(bind: userId)").run()
            return
        }
        let new = NewProfile(realm: realm, userId: userId, profile: profile)
        try await sql.raw("""
            INSERT INTO user_profiles (realm, user_id, external_id, display_name, given_name, family_name, attributes)
            VALUES \(profileRow(new))
            ON CONFLICT (realm, user_id) DO UPDATE SET external_id = excluded.external_id, display_name = excluded.display_name,
                given_name = excluded.given_name, family_name = excluded.family_name, attributes = excluded.attributes
            """).run()
        try await insertEmails(of: [new], on: sql)
    }

    /// The profiles of users just created (64 at most, as a group of creations), on a transaction's session: one
    /// statement for the profiles and as few as the engines' parameter limits allow for their addresses.
    static func insertProfiles(_ profiles: [NewProfile], on sql: any SQLDatabase) async throws {
        guard !profiles.isEmpty else { return }
        try await sql.raw("""
            INSERT INTO user_profiles (realm, user_id, external_id, display_name, given_name, family_name, attributes)
            VALUES \(SQLList(profiles.map(profileRow)))
            """).run()
        try await insertEmails(of: profiles, on: sql)
    }

    /// Addresses in 1,000 rows a statement at most: 7,000 parameters, inside SQLite's 32,766 and PostgreSQL's 65,535
    /// whatever number of addresses a profile holds.
    private static func insertEmails(of profiles: [NewProfile], on sql: any SQLDatabase) async throws {
        let rows = profiles.flatMap { new in
            new.profile.emails.enumerated().map { position, email in
                SQLQueryString("""
                    (\(bind: new.realm), \(bind: new.userId), \(bind: position), \(bind: email.value), \(bind: UserNameFolding.folded(email.value)),
                        \(bind: email.type), \(bind: email.primary))
                    """)
            }
        }
        for start in stride(from: 0, to: rows.count, by: 1_000) {
            try await sql.raw("""
                INSERT INTO user_emails (realm, user_id, position, value, value_folded, type, is_primary)
                VALUES \(SQLList(Array(rows[start..<min(start + 1_000, rows.count)])))
                """).run()
        }
    }

    private static func profileRow(_ new: NewProfile) -> SQLQueryString {
        let profile = new.profile
        let attributes = UserProfileStorage.encode(profile)
        return """
            (\(bind: new.realm), \(bind: new.userId), \(bind: profile.externalId), \(bind: profile.displayName),
                \(bind: profile.name?.givenName), \(bind: profile.name?.familyName), \(bind: attributes))
            """
    }

    public func profiles(realm: String, userIds: [String]) async throws -> [String: UserProfile] {
        guard !userIds.isEmpty else { return [:] }
        let rows = try await StoreErrorMapping.mapping("profiles(realm:userIds:)") {
            try await database.sql.raw("""
                SELECT user_id, attributes FROM user_profiles WHERE realm = \(bind: realm) AND user_id IN (\(binds: userIds))
                """).all()
        }
        var profiles: [String: UserProfile] = [:]
        for row in rows {
            let attributes = try row.decode(column: "attributes", as: String.self)
            profiles[try row.decode(column: "user_id", as: String.self)] = try UserProfileStorage.decode(attributes)
        }
        return profiles
    }

    public func existingIds(realm: String, ids: [String]) async throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        return try await StoreErrorMapping.mapping("existingIds(realm:ids:)") {
            Set(try await database.sql.raw("SELECT id FROM users WHERE realm = \(bind: realm) AND id IN (\(binds: ids))").all()
                .map { try $0.decode(column: "id", as: String.self) })
        }
    }

    public func search(realm: String, match: UserMatch?, offset: Int, limit: Int) async throws -> UserSearchPage {
        var condition: SQLQueryString = "users.realm = \(bind: realm)"
        if let match {
            do {
                condition = condition + " AND " + (try SQLUserMatch(engine: database.engine).condition(match))
            } catch {
                throw UserSearchError.unsupported(error.description)
            }
        }
        let from: SQLQueryString = "FROM users LEFT JOIN user_profiles p ON p.realm = users.realm AND p.user_id = users.id WHERE " + condition
        return try await StoreErrorMapping.mapping("search(realm:match:)") {
            // The page first: a page that ends the matches (a directory's lookup finds one user) tells the total, and
            // the count is a statement saved on every such read.
            // The profiles come with the page, from the join the match already needs: a statement fewer again.
            var page = UserSearchPage(total: 0, users: [])
            if limit > 0 {
                let rows = try await database.sql.raw(
                    "SELECT \(unsafeRaw: Self.columns(prefixed: "", from: "users")), p.attributes AS profile_attributes " + from
                        + " ORDER BY \(unsafeRaw: SQLUserMatch(engine: database.engine).pageOrder("users.id", filtered: match != nil))"
                        + " LIMIT \(bind: limit) OFFSET \(bind: offset)"
                ).all()
                for row in rows {
                    let user = try Self.user(from: row)
                    page.users.append(user)
                    if let attributes = try row.decode(column: "profile_attributes", as: String?.self) {
                        page.profiles[user.id] = try UserProfileStorage.decode(attributes)
                    }
                }
                if rows.count < limit, !rows.isEmpty || offset == 0 {
                    page.total = offset + rows.count
                    return page
                }
            }
            page.total = try await database.sql.raw("SELECT count(*) AS n " + from).first()?.decode(column: "n", as: Int.self) ?? 0
            return page
        }
    }

}

/// A `UserMatch` the store cannot search with (an attribute compared with a value of another kind).
public enum UserSearchError: Error, Equatable, CustomStringConvertible {
    case unsupported(String)

    public var description: String {
        switch self {
        case .unsupported(let why): "unsupported search: \(why)"
        }
    }
}
