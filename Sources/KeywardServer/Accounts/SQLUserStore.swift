// The users table: local accounts, their password hashes and whether they are enabled.
import Foundation
import SQLKit

public struct SQLUserStore: UserStore {
    let database: KeywardDatabase

    /// Users created by concurrent requests (a directory provisioning a realm over SCIM) are written together: one
    /// transaction and one commit for the group, where a commit each queued them behind one another on SQLite.
    private let creations: GroupCommit<NewUser, Result<Void, any Error>>

    /// Users a grouped transaction creates at most.
    static let maxGroup = 64

    private struct NewUser: Sendable {
        let user: User
        let profile: UserProfile
    }

    public init(database: KeywardDatabase) {
        self.database = database
        // On the default executor, not `writerExecutor`: a group is a transaction, which SQLite runs on its session
        // connection, and a statement of another writer waiting for the transaction's lock on the statement
        // connection's thread would keep the transaction from resuming there (a deadlock).
        creations = GroupCommit(maxGroup: Self.maxGroup, writeTogether: { group in
            try await Self.create(group, in: database)
        })
    }

    /// Returns once the user is stored, or refused (a name or id taken, the realm gone), grouped with the creations
    /// of other requests under way. When a group is refused, only the request whose user is at fault learns of it,
    /// with its own message.
    public func createUser(_ user: User, profile: UserProfile) async throws {
        try await creations.submit(NewUser(user: user, profile: profile)).get()
    }

    /// The group's users in one statement and their profiles in two more (`insertProfiles`), in one transaction: a
    /// statement per row spent a millisecond a user on SQLite's session connection, which capped a directory's
    /// creates there near 1,000 a second.
    private static func create(_ group: [NewUser], in database: KeywardDatabase) async throws {
        let first = group[0].user
        let alone = group.count == 1
        try await StoreErrorMapping.mapping(
            "createUser",
            conflict: alone ? "a user named '\(first.username)' or with id '\(first.id)' exists already in realm '\(first.realm)'" : "a user of the group exists already",
            missingParent: alone ? "realm '\(first.realm)' does not exist" : "a user's realm does not exist"
        ) {
            let users = group.map(\.user)
            let profiled = group.filter { !$0.profile.isEmpty }.map { NewProfile(realm: $0.user.realm, userId: $0.user.id, profile: $0.profile) }
            guard !profiled.isEmpty else { return try await insert(users, on: database.sql) }
            try await database.transaction { session in
                try await insert(users, on: session)
                try await insertProfiles(profiled, on: session)
            }
        }
    }

    /// The inserts, on a connection or inside a transaction (64 users at most: 7 parameters each).
    private static func insert(_ users: [User], on sql: any SQLDatabase) async throws {
        let rows = users.map { user in
            SQLQueryString("""
                (\(bind: user.realm), \(bind: user.id), \(bind: user.username), \(bind: UserNameFolding.folded(user.username)),
                    \(bind: user.passwordHash), \(bind: user.enabled), \(bind: StorageTime.milliseconds(user.createdAt)))
                """)
        }
        try await sql.raw("""
            INSERT INTO users (realm, id, username, username_folded, password_hash, enabled, created_at) VALUES \(SQLList(rows))
            """).run()
    }

    public func user(realm: String, username: String) async throws -> User? {
        try await StoreErrorMapping.mapping("user(realm:username:)") {
            try await database.sql.raw("SELECT \(unsafeRaw: Self.columns) FROM users WHERE realm = \(bind: realm) AND username = \(bind: username)")
                .first().map(Self.user(from:))
        }
    }

    public func user(realm: String, id: String) async throws -> User? {
        try await StoreErrorMapping.mapping("user(realm:id:)") {
            try await database.sql.raw("SELECT \(unsafeRaw: Self.columns) FROM users WHERE realm = \(bind: realm) AND id = \(bind: id)")
                .first().map(Self.user(from:))
        }
    }

    public func listUsers(realm: String) async throws -> [User] {
        try await StoreErrorMapping.mapping("listUsers") {
            try await database.sql.raw("SELECT \(unsafeRaw: Self.columns) FROM users WHERE realm = \(bind: realm) ORDER BY username")
                .all().map(Self.user(from:))
        }
    }

    public func users(realm: String, query: UserQuery) async throws -> [User] {
        var conditions = [SQLQueryString("realm = \(bind: realm)")]
        if let after = query.after { conditions.append("id > \(bind: after)") }
        if let prefix = query.usernamePrefix {
            // substr counts characters on both engines; LIKE would fold case on SQLite alone.
            conditions.append("substr(username, 1, CAST(\(bind: prefix.unicodeScalars.count) AS INTEGER)) = \(bind: prefix)")
        }
        if let enabled = query.enabled { conditions.append("enabled = \(bind: enabled)") }
        let filter = conditions.dropFirst().reduce(conditions[0]) { $0 + " AND " + $1 }
        let statement: SQLQueryString = "SELECT \(unsafeRaw: Self.columns) FROM users WHERE " + filter + " ORDER BY id LIMIT \(bind: query.limit)"
        return try await StoreErrorMapping.mapping("users(realm:query:)") {
            try await database.sql.raw(statement).all().map(Self.user(from:))
        }
    }

    public func updateUser(realm: String, id: String, change: UserChange, expectedRevision: Int64?) async throws -> UserUpdateOutcome {
        var statement: SQLQueryString = "UPDATE users SET revision = revision + 1"
        if let username = change.username {
            statement = statement + ", username = \(bind: username), username_folded = \(bind: UserNameFolding.folded(username))"
        }
        if let enabled = change.enabled { statement = statement + ", enabled = \(bind: enabled)" }
        statement = statement + " WHERE realm = \(bind: realm) AND id = \(bind: id)"
        if let expectedRevision { statement = statement + " AND revision = \(bind: expectedRevision)" }
        statement = statement + " RETURNING \(unsafeRaw: Self.columns)"
        let updated = try await StoreErrorMapping.mapping(
            "updateUser", conflict: "a user named '\(change.username ?? "")' exists already in realm '\(realm)'"
        ) {
            guard let profile = change.profile else { return try await database.sql.raw(statement).first().map(Self.user(from:)) }
            return try await database.transaction { [statement] session in
                guard let updated = try await session.raw(statement).first().map(Self.user(from:)) else { return nil }
                try await Self.writeProfile(profile, realm: realm, userId: id, on: session)
                return updated
            }
        }
        if let updated { return .updated(updated) }
        guard let current = try await user(realm: realm, id: id) else { return .notFound }
        return .stale(current: current.revision)
    }

    public func setEnabled(_ enabled: Bool, realm: String, id: String) async throws {
        let updated = try await StoreErrorMapping.mapping("setEnabled") {
            try await database.sql.countingRows("""
                UPDATE users SET enabled = \(bind: enabled), revision = revision + 1 WHERE realm = \(bind: realm) AND id = \(bind: id) RETURNING 1 AS updated
                """)
        }
        guard updated > 0 else { throw StoreError.notFound("user '\(id)' not found in realm '\(realm)'") }
    }

    public func deleteUser(realm: String, id: String) async throws {
        let deleted = try await StoreErrorMapping.mapping("deleteUser") {
            try await database.sql.countingRows("DELETE FROM users WHERE realm = \(bind: realm) AND id = \(bind: id) RETURNING 1 AS deleted")
        }
        guard deleted > 0 else { throw StoreError.notFound("user '\(id)' not found in realm '\(realm)'") }
    }

    public func setPasswordHash(_ hash: String?, realm: String, id: String) async throws {
        let updated = try await StoreErrorMapping.mapping("setPasswordHash") {
            try await database.sql.countingRows("""
                UPDATE users SET password_hash = \(bind: hash), revision = revision + 1 WHERE realm = \(bind: realm) AND id = \(bind: id) RETURNING 1 AS updated
                """)
        }
        guard updated > 0 else { throw StoreError.notFound("user '\(id)' not found in realm '\(realm)'") }
    }

    private static let columnNames = ["realm", "id", "username", "password_hash", "enabled", "created_at", "revision"]
    static let columns = columnNames.joined(separator: ", ")

    /// The user columns of table alias `table`, each renamed `prefix` + name, for joins with tables that share
    /// column names.
    static func columns(prefixed prefix: String, from table: String) -> String {
        columnNames.map { "\(table).\($0) AS \(prefix)\($0)" }.joined(separator: ", ")
    }

    static func user(from row: any SQLRow) throws -> User { try user(from: row, prefix: "") }

    static func user(from row: any SQLRow, prefix: String) throws -> User {
        User(
            id: try row.decode(column: prefix + "id", as: String.self),
            realm: try row.decode(column: prefix + "realm", as: String.self),
            username: try row.decode(column: prefix + "username", as: String.self),
            passwordHash: try row.decode(column: prefix + "password_hash", as: String?.self),
            enabled: try row.decode(column: prefix + "enabled", as: Bool.self),
            createdAt: StorageTime.date(milliseconds: try row.decode(column: prefix + "created_at", as: Int64.self)),
            revision: try row.decode(column: prefix + "revision", as: Int64.self)
        )
    }
}
