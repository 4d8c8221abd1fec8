import Foundation
import HummingbirdBcrypt
import KeywardJOSE

/// Local password accounts. Passwords are bcrypt-hashed; verification is done off the cooperative pool's
/// hot path by the caller's choice of task, as bcrypt is deliberately slow.
public final class UserService: Sendable {
    private let store: any UserStore
    private let clock: any KeywardClock
    private let bcryptCost: UInt8
    /// A hash of a random password at the configured cost, checked when the username is unknown.
    private let decoyHash: String

    public init(store: any UserStore, clock: any KeywardClock, bcryptCost: UInt8 = 12) {
        self.store = store
        self.clock = clock
        self.bcryptCost = bcryptCost
        self.decoyHash = Bcrypt.hash(UUID().uuidString, cost: bcryptCost)
    }

    public func createUser(realm: String, username: String, password: String?) async throws -> User {
        guard (1...128).contains(username.count), username.unicodeScalars.allSatisfy({ !CharacterSet.controlCharacters.contains($0) && $0 != " " }) else {
            throw UserError.invalidUsername(username)
        }
        if let password, !(1...1024).contains(password.utf8.count) { throw UserError.invalidPassword }
        let user = User(
            id: SecureRandom.uuidString(), realm: realm, username: username,
            passwordHash: password.map { Bcrypt.hash($0, cost: bcryptCost) }, enabled: true, createdAt: clock.now()
        )
        do {
            try await store.createUser(user)
        } catch StoreError.conflict {
            throw UserError.exists(username)
        }
        return user
    }

    public func user(realm: String, username: String) async throws -> User? { try await store.user(realm: realm, username: username) }

    public func user(realm: String, id: String) async throws -> User? { try await store.user(realm: realm, id: id) }

    public func listUsers(realm: String) async throws -> [User] { try await store.listUsers(realm: realm) }

    /// Disables or re-enables an account; a disabled account cannot log in. Throws `.notFound` when absent.
    public func setEnabled(_ enabled: Bool, realm: String, id: String) async throws {
        try await store.setEnabled(enabled, realm: realm, id: id)
    }

    /// Checks a password. bcrypt runs even for unknown users so response time does not reveal which usernames exist.
    public func authenticate(realm: String, username: String, password: String) async throws -> PasswordCheck {
        let user = try await store.user(realm: realm, username: username)
        let matches = Bcrypt.verify(password, hash: user?.passwordHash ?? decoyHash)
        guard let user, user.passwordHash != nil, matches else { return .invalidCredentials }
        return user.enabled ? .authenticated(user) : .disabled(user)
    }

    public enum PasswordCheck: Sendable, Equatable {
        case authenticated(User)
        case disabled(User)
        case invalidCredentials
    }

}

public enum UserError: Error, CustomStringConvertible, Equatable {
    case invalidUsername(String)
    case invalidPassword
    case exists(String)

    public var description: String {
        switch self {
        case .invalidUsername(let name): "username '\(name.prefix(64))' is invalid: 1-128 characters, no spaces or control characters"
        case .invalidPassword: "password must be 1-1024 bytes"
        case .exists(let name): "user '\(name.prefix(64))' exists already"
        }
    }
}
