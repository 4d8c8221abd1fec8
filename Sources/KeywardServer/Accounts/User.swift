// A realm's local account, and the store that keeps users.
import Foundation

/// A local account of a realm.
public struct User: Sendable, Equatable {
    public var id: String
    public var realm: String
    public var username: String
    /// `PasswordHasher`'s hash; nil for accounts that sign in only through a social provider.
    public var passwordHash: String?
    public var enabled: Bool
    public var createdAt: Date

    public init(id: String, realm: String, username: String, passwordHash: String?, enabled: Bool, createdAt: Date) {
        self.id = id
        self.realm = realm
        self.username = username
        self.passwordHash = passwordHash
        self.enabled = enabled
        self.createdAt = createdAt
    }
}

public protocol UserStore: Sendable {
    /// Inserts a user; throws `.conflict` when (realm, username) exists.
    func createUser(_ user: User) async throws
    func user(realm: String, username: String) async throws -> User?
    func user(realm: String, id: String) async throws -> User?
    func listUsers(realm: String) async throws -> [User]
    /// Throws `.notFound` when the user does not exist.
    func setEnabled(_ enabled: Bool, realm: String, id: String) async throws
    /// Throws `.notFound` when the user does not exist.
    func deleteUser(realm: String, id: String) async throws
    /// Throws `.notFound` when the user does not exist.
    func setPasswordHash(_ hash: String?, realm: String, id: String) async throws
}
