// The users host tokens name, looked up by realm, issuer and subject and cached for a few seconds.
import Foundation

/// The users host tokens name, by (realm, issuer, subject), read through Accounts' `UserService` and kept a few
/// seconds: an exchange then costs no query for its user. A user disabled or unlinked on any node is refused within
/// `lifetime` (the access tokens already issued to them live longer than that anyway).
final class EnrolledUsers: Sendable {
    static let lifetime: TimeInterval = 5
    private let users: UserService
    private let clock: any KeywardClock
    private let cache = ShortLivedCache<String, Enrolled>(lifetime: EnrolledUsers.lifetime)

    struct Enrolled: Sendable {
        let identity: ExternalIdentity
        let user: User
    }

    init(users: UserService, clock: any KeywardClock) {
        self.users = users
        self.clock = clock
    }

    func user(realm: String, issuer: String, subject: String) async throws -> Enrolled? {
        let key = [realm, issuer, subject].joined(separator: "\u{0}")
        let now = clock.now()
        if let cached = cache.value(for: key, now: now) { return cached }
        guard let found = try await users.user(realm: realm, issuer: issuer, subject: subject) else { return nil }
        let enrolled = Enrolled(identity: found.identity, user: found.user)
        cache.store(enrolled, for: key, now: now)
        return enrolled
    }

    /// After this node changed enrolments (an issuer removed): no stale answer here, at least.
    func forget() { cache.removeAll() }
}
