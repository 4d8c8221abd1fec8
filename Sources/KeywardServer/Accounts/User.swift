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
    /// One more at every change of the stored row: the admin API's `ETag`.
    public var revision: Int64 = 1

    public init(id: String, realm: String, username: String, passwordHash: String?, enabled: Bool, createdAt: Date, revision: Int64 = 1) {
        self.revision = revision
        self.id = id
        self.realm = realm
        self.username = username
        self.passwordHash = passwordHash
        self.enabled = enabled
        self.createdAt = createdAt
    }
}

public protocol UserStore: Sendable {
    /// Inserts a user with its profile, in one transaction; throws `.conflict` when (realm, username) exists.
    func createUser(_ user: User, profile: UserProfile) async throws
    func user(realm: String, username: String) async throws -> User?
    func user(realm: String, id: String) async throws -> User?
    func listUsers(realm: String) async throws -> [User]
    /// One page of a realm's users in creation order, after the user `query.after` names.
    func users(realm: String, query: UserQuery) async throws -> [User]
    /// Renames, enables or disables a user in one statement, only while its revision is `expectedRevision` (when
    /// given). Throws `.conflict` when another user has the new name.
    func updateUser(realm: String, id: String, change: UserChange, expectedRevision: Int64?) async throws -> UserUpdateOutcome
    /// Throws `.notFound` when the user does not exist.
    func setEnabled(_ enabled: Bool, realm: String, id: String) async throws
    /// Throws `.notFound` when the user does not exist.
    func deleteUser(realm: String, id: String) async throws
    /// Throws `.notFound` when the user does not exist.
    func setPasswordHash(_ hash: String?, realm: String, id: String) async throws
    /// The profiles of these users of the realm; a user no directory described has none in the answer.
    func profiles(realm: String, userIds: [String]) async throws -> [String: UserProfile]
    /// Which of these ids are users of the realm.
    func existingIds(realm: String, ids: [String]) async throws -> Set<String>
    /// The users `match` finds, by id (time-ordered: oldest first), from `offset`, at most `limit`; and how many it finds in all.
    func search(realm: String, match: UserMatch?, offset: Int, limit: Int) async throws -> UserSearchPage
}

extension UserStore {
    func createUser(_ user: User) async throws {
        try await createUser(user, profile: UserProfile())
    }
}

/// Which users a page lists (the admin API's `GET …/users`).
public struct UserQuery: Sendable, Equatable {
    /// The id of the last user of the previous page.
    public var after: String?
    public var limit: Int
    /// Only users whose username starts with this, exactly (case-sensitive, alike on both engines).
    public var usernamePrefix: String?
    public var enabled: Bool?

    public init(after: String? = nil, limit: Int = 100, usernamePrefix: String? = nil, enabled: Bool? = nil) {
        (self.after, self.limit, self.usernamePrefix, self.enabled) = (after, limit, usernamePrefix, enabled)
    }
}

/// What an update changes; nil leaves it as it is.
public struct UserChange: Sendable, Equatable {
    public var username: String?
    public var enabled: Bool?
    /// Replaces the whole profile (its e-mail addresses too) in the same transaction as the rest.
    public var profile: UserProfile?

    public init(username: String? = nil, enabled: Bool? = nil, profile: UserProfile? = nil) {
        (self.username, self.enabled, self.profile) = (username, enabled, profile)
    }
}

public enum UserUpdateOutcome: Sendable, Equatable {
    /// The user as stored after the change, with its new revision.
    case updated(User)
    case notFound
    /// The user changed since the revision the caller had: nothing was written.
    case stale(current: Int64)
}
