import Foundation
import SQLKit

public struct SQLUserStore: UserStore {
    let database: KeywardDatabase

    public init(database: KeywardDatabase) {
        self.database = database
    }

    public func createUser(_ user: User) async throws {
        try await StoreErrorMapping.mapping(
            "createUser",
            conflict: "a user named '\(user.username)' or with id '\(user.id)' exists already in realm '\(user.realm)'",
            missingParent: "realm '\(user.realm)' does not exist"
        ) {
            try await database.sql.raw("""
                INSERT INTO users (realm, id, username, password_hash, enabled, created_at)
                VALUES (\(bind: user.realm), \(bind: user.id), \(bind: user.username), \(bind: user.passwordHash),
                        \(bind: user.enabled), \(bind: StorageTime.milliseconds(user.createdAt)))
                """).run()
        }
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

    public func setEnabled(_ enabled: Bool, realm: String, id: String) async throws {
        let updated = try await StoreErrorMapping.mapping("setEnabled") {
            try await database.sql.countingRows("""
                UPDATE users SET enabled = \(bind: enabled) WHERE realm = \(bind: realm) AND id = \(bind: id) RETURNING 1 AS updated
                """)
        }
        guard updated > 0 else { throw StoreError.notFound("user '\(id)' not found in realm '\(realm)'") }
    }

    private static let columns = "realm, id, username, password_hash, enabled, created_at"

    private static func user(from row: any SQLRow) throws -> User {
        User(
            id: try row.decode(column: "id", as: String.self),
            realm: try row.decode(column: "realm", as: String.self),
            username: try row.decode(column: "username", as: String.self),
            passwordHash: try row.decode(column: "password_hash", as: String?.self),
            enabled: try row.decode(column: "enabled", as: Bool.self),
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self))
        )
    }
}
