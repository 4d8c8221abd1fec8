// A realm's users: password accounts and checks, provider sign-ins and links, enabling, deletion.
import Foundation
import Crypto
import KeywardJOSE

/// Local password accounts. Passwords are hashed by `PasswordHasher` (bcrypt over a keyed pre-hash, so
/// every byte of a long password counts).
public final class UserService: Sendable {
    private let store: any UserStore
    private let identities: any ExternalIdentityStore
    private let sessions: any BrowserSessionStore
    /// What apps hold from the user's sessions (`AppSessionDirectory`), ended with them.
    private let plugins: AccountPlugins
    private let audit: AuditLog
    private let clock: any KeywardClock
    private let hasher: PasswordHasher
    /// Sign-in checks run here, off the request threads.
    let passwordWork: PasswordWork
    /// A hash of a random password at the configured cost, checked when the username is unknown.
    private let decoyHash: String
    /// Identities at another issuer and their users, kept `identityCacheLifetime` for `cachedUser`.
    private let identityCache = ShortLivedCache<String, IdentifiedUser>(lifetime: UserService.identityCacheLifetime)

    /// `passwordKey` keys the pre-hash: derive it from the master key (`PasswordHasher.keyPurpose`), the same
    /// on every node.
    init(
        store: any UserStore, identities: any ExternalIdentityStore, sessions: any BrowserSessionStore, audit: AuditLog, clock: any KeywardClock, passwordKey: SymmetricKey,
        bcryptCost: UInt8 = 12, passwordWork: PasswordWork, plugins: AccountPlugins
    ) {
        self.plugins = plugins
        self.passwordWork = passwordWork
        self.store = store
        self.identities = identities
        self.sessions = sessions
        self.audit = audit
        self.clock = clock
        self.hasher = PasswordHasher(key: passwordKey, cost: bcryptCost)
        self.decoyHash = hasher.hash(UUID().uuidString)
    }

    public func createUser(realm: String, username: String, password: String?, enabled: Bool = true, profile: UserProfile = UserProfile()) async throws -> User {
        try Self.checkUsername(username)
        if let password { try Self.checkLength(password) }
        let now = clock.now()
        let user = User(
            id: SecureRandom.timeOrderedUUIDString(at: now), realm: realm, username: username,
            passwordHash: password.map { hasher.hash($0) }, enabled: enabled, createdAt: StorageTime.asStored(now)
        )
        do {
            try await store.createUser(user, profile: profile)
        } catch StoreError.conflict {
            throw UserError.exists(username)
        }
        await audit.record(.userCreated, realm: realm, userId: user.id, details: ["username": username])
        return user
    }

    /// A new user without a password, known by an identity at another issuer, created with the link in one
    /// statement. An identity linked already answers `.identityExists` with its user, so enrolling twice is harmless.
    public func createExternalUser(realm: String, username: String, kind: ExternalIdentity.Kind, issuer: String, subject: String) async throws -> User {
        try Self.checkUsername(username)
        let now = clock.now()
        let user = User(id: SecureRandom.timeOrderedUUIDString(at: now), realm: realm, username: username, passwordHash: nil, enabled: true, createdAt: now)
        let identity = ExternalIdentity(realm: realm, userId: user.id, kind: kind, issuer: issuer, subject: subject, createdAt: now)
        do {
            try await identities.createUser(user, with: identity)
        } catch StoreError.conflict {
            if let linked = try await identities.user(realm: realm, issuer: issuer, subject: subject) {
                throw UserError.identityExists(linked.user)
            }
            return try await relink(realm: realm, username: username, identity: identity)
        }
        await audit.record(.externalIdentityLinked, realm: realm, userId: user.id, details: ["kind": kind.rawValue, "issuer": issuer, "subject": subject])
        return user
    }

    /// The user a provider identity names, found or made on its first sign-in. Concurrent first sign-ins of one
    /// identity make one user: the identity's key decides, and the others read the winner's user. Every sign-in
    /// stores what the provider said (e-mail, name) and when.
    ///
    /// A first sign-in whose e-mail address another identity already has is where accounts get taken over. An
    /// address counts as verified only when a provider trusted for e-mail (`trustEmail`) said so — the flag is
    /// stored that way, so an untrusted provider's `email_verified` never vouches for anything (security review
    /// H1). The new identity links to the account holding the address when both are verified so and one account
    /// holds it; an account holding it verified refuses any other new identity with `.accountExists`, naming the
    /// providers to sign in with first; unverified holders neither link nor block.
    ///
    /// A new user is named `preferredUsername` (the provider's username claim, when the provider maps one) if that is
    /// a valid username no one in the realm has; otherwise, and always without one, `alias-` and random letters.
    /// A name already taken is never a way into its account: the new user simply gets a generated one.
    public func signInWithProvider(
        realm: String, issuer: String, subject: String, details: ExternalIdentity.ProviderDetails, trustEmail: Bool = false,
        preferredUsername: String? = nil
    ) async throws -> (user: User, created: Bool) {
        var preferredUsername = preferredUsername.flatMap { (try? Self.checkUsername($0)) != nil ? $0 : nil }
        let now = clock.now()
        let details = Self.stored(details, trustEmail: trustEmail, at: now)
        for _ in 0..<3 {
            if let user = try await identities.recordSignIn(realm: realm, issuer: issuer, subject: subject, details: details, at: now) {
                return (user, false)
            }
            let identity = ExternalIdentity(realm: realm, userId: "", kind: .provider, issuer: issuer, subject: subject, createdAt: now, details: details)
            // Addresses beyond ASCII are never matched: case folding would make different addresses equal.
            if let email = details.email, email.unicodeScalars.allSatisfy(\.isASCII) {
                let holders = try await identities.verifiedHolders(realm: realm, email: email)
                // This very identity, stored by a concurrent first sign-in since the read above: read it next.
                if holders.contains(where: { $0.identity.issuer == issuer && $0.identity.subject == subject }) { continue }
                if let owner = try Self.accountOwning(holders, identity: identity) {
                    var link = identity
                    link.userId = owner.id
                    do {
                        try await identities.createIdentity(link)
                    } catch StoreError.conflict {
                        continue  // the identity was linked meanwhile: read it next
                    }
                    await audit.record(.externalIdentityLinked, realm: realm, userId: owner.id, details: [
                        "kind": "provider", "issuer": issuer, "provider": details.alias, "by": "verified-email",
                    ])
                    return (owner, false)
                }
            }
            let user = User(
                id: SecureRandom.timeOrderedUUIDString(at: now), realm: realm,
                username: preferredUsername ?? "\(details.alias)-\(Base64URL.encode(SecureRandom.bytes(6)).lowercased())",
                passwordHash: nil, enabled: true, createdAt: now
            )
            var owned = identity
            owned.userId = user.id
            do {
                try await identities.createUser(user, with: owned)
            } catch StoreError.conflict {
                // Another sign-in of this identity won (read it next), or the name was taken: the next try, if this
                // identity is still new, takes a generated one.
                preferredUsername = nil
                continue
            }
            await audit.record(.userSignedUp, realm: realm, userId: user.id, details: ["provider": details.alias, "issuer": issuer])
            return (user, true)
        }
        throw StoreError.unavailable("no user could be created for \(issuer) subject \(subject.prefix(64))")
    }

    /// A signed-in user links another provider identity to their account (the account page): the identity is
    /// theirs from now on. One linked to another user stays where it is (`.identityLinkedElsewhere`); one linked
    /// to this user already is a success. As at sign-in, an address counts as verified only when `trustEmail`.
    public func linkProvider(
        realm: String, userId: String, issuer: String, subject: String, details: ExternalIdentity.ProviderDetails, trustEmail: Bool
    ) async throws {
        let now = clock.now()
        let details = Self.stored(details, trustEmail: trustEmail, at: now)
        let identity = ExternalIdentity(realm: realm, userId: userId, kind: .provider, issuer: issuer, subject: subject, createdAt: now, details: details)
        do {
            try await identities.createIdentity(identity)
        } catch StoreError.conflict {
            guard let linked = try await identities.user(realm: realm, issuer: issuer, subject: subject) else { throw StoreError.unavailable("link raced an unlink") }
            guard linked.user.id == userId else { throw UserError.identityLinkedElsewhere }
            try await identities.recordSignIn(realm: realm, issuer: issuer, subject: subject, details: details, at: now)
            return
        }
        await audit.record(.externalIdentityLinked, realm: realm, userId: userId, details: [
            "kind": "provider", "issuer": issuer, "provider": details.alias, "by": "account-page",
        ])
    }

    /// The ways into the account Accounts holds: its password, and the identities at providers the realm still has.
    public func waysIn(realm: String, user: User) async throws -> Int {
        (user.passwordHash == nil ? 0 : 1) + (try await identities.workingProviderIdentities(realm: realm, userId: user.id))
    }

    /// The ways into the account the other parts hold (passkeys).
    func waysInElsewhere(realm: String, userId: String) async throws -> Int {
        try await plugins.signInMethodCount(realm: realm, userId: userId)
    }

    /// The user unlinks one of their provider identities (the account page), never the last way they sign in.
    public func unlinkProvider(realm: String, userId: String, issuer: String, subject: String) async throws -> ProviderUnlink {
        guard Self.canNameIdentity(issuer, subject) else { return .notFound }
        let elsewhere = try await waysInElsewhere(realm: realm, userId: userId)
        let outcome = try await identities.unlinkProviderIdentity(realm: realm, userId: userId, issuer: issuer, subject: subject, waysInElsewhere: elsewhere)
        if outcome == .unlinked {
            await audit.record(.externalIdentityUnlinked, realm: realm, userId: userId, details: ["kind": "provider", "issuer": issuer])
        }
        return outcome
    }

    /// The account holding a new identity's e-mail address verified (`holders`) when the identity may be linked to
    /// it; nil when no account holds it verified. Throws `.accountExists` when one does but the new identity's own
    /// address is not verified.
    private static func accountOwning(_ holders: [(identity: ExternalIdentity, user: User)], identity: ExternalIdentity) throws -> User? {
        let verified = holders.filter { $0.identity.details?.emailVerified == true }
        guard !verified.isEmpty else { return nil }
        if identity.details?.emailVerified == true, Set(verified.map(\.user.id)).count == 1, let owner = verified.first?.user {
            return owner
        }
        throw UserError.accountExists(providers: Array(Set(verified.compactMap { $0.identity.details?.alias })).sorted())
    }

    /// What a sign-in or link stores of the provider's word: the time, the address as addresses are compared, and
    /// "verified" only when the provider is trusted for it (security review H1).
    private static func stored(_ details: ExternalIdentity.ProviderDetails, trustEmail: Bool, at now: Date) -> ExternalIdentity.ProviderDetails {
        var details = details
        details.lastLoginAt = now
        details.email = details.email.map(comparableEmail)
        details.emailVerified = trustEmail && details.emailVerified == true
        return details
    }

    /// ASCII letters lower-cased, nothing else changed: how addresses are stored and compared.
    static func comparableEmail(_ email: String) -> String {
        String(String.UnicodeScalarView(email.unicodeScalars.map { ("A"..."Z").contains($0) ? Unicode.Scalar($0.value + 32)! : $0 }))
    }

    /// A user of that name exists. If it has no password and no identity left (its issuer was removed and added
    /// again), the identity links to it, keeping its devices; any other user keeps its name to itself.
    private func relink(realm: String, username: String, identity: ExternalIdentity) async throws -> User {
        guard let existing = try await store.user(realm: realm, username: username), existing.passwordHash == nil,
            try await identities.identities(realm: realm, userId: existing.id).isEmpty
        else { throw UserError.exists(username) }
        var link = identity
        link.userId = existing.id
        do {
            try await identities.createIdentity(link)
        } catch StoreError.conflict {
            throw UserError.exists(username)
        }
        await audit.record(
            .externalIdentityLinked, realm: realm, userId: existing.id,
            details: ["kind": link.kind.rawValue, "issuer": link.issuer, "subject": link.subject, "relinked": "true"]
        )
        return existing
    }

    /// The user an identity at another issuer names, with the identity.
    public func user(realm: String, issuer: String, subject: String) async throws -> (identity: ExternalIdentity, user: User)? {
        guard Self.canNameIdentity(issuer, subject) else { return nil }
        return try await identities.user(realm: realm, issuer: issuer, subject: subject)
    }

    /// An identity at another issuer and the user it names.
    public struct IdentifiedUser: Sendable {
        public let identity: ExternalIdentity
        public let user: User
    }

    /// How long `cachedUser` keeps an answer. A user disabled or unlinked on any node is refused by its readers
    /// within this time (the access tokens already issued to them live longer than that anyway).
    public static let identityCacheLifetime: TimeInterval = 5

    /// `user(realm:issuer:subject:)` kept a few seconds, for a hot path that names the same users again and again:
    /// a host token's exchange then costs no query for its user.
    public func cachedUser(realm: String, issuer: String, subject: String) async throws -> IdentifiedUser? {
        let key = [realm, issuer, subject].joined(separator: "\u{0}")
        let now = clock.now()
        if let cached = identityCache.value(for: key, now: now) { return cached }
        guard let found = try await user(realm: realm, issuer: issuer, subject: subject) else { return nil }
        let identified = IdentifiedUser(identity: found.identity, user: found.user)
        identityCache.store(identified, for: key, now: now)
        return identified
    }

    /// After this node changed identities in bulk (an issuer removed): no stale answer here, at least.
    public func forgetCachedIdentities() { identityCache.removeAll() }

    /// An issuer or subject with a NUL names no identity: PostgreSQL text cannot hold one and refuses it even in a
    /// lookup, so it is answered as unknown here, alike on both engines, instead of failing as the store.
    private static func canNameIdentity(_ issuer: String, _ subject: String) -> Bool {
        !issuer.utf8.contains(0) && !subject.utf8.contains(0)
    }

    /// The identities at other issuers linked to a user (the account page's "Signed in with").
    public func identities(realm: String, userId: String) async throws -> [ExternalIdentity] {
        try await identities.identities(realm: realm, userId: userId)
    }

    public func identities(realm: String, issuer: String) async throws -> [ExternalIdentity] {
        try await identities.identities(realm: realm, issuer: issuer)
    }

    /// Unlinks every user from `issuer` (the users stay); returns how many identities went.
    public func unlinkIdentities(realm: String, issuer: String, kind: ExternalIdentity.Kind) async throws -> Int {
        try await identities.deleteIdentities(realm: realm, issuer: issuer, kind: kind)
    }

    public func user(realm: String, username: String) async throws -> User? { try await store.user(realm: realm, username: username) }

    public func user(realm: String, id: String) async throws -> User? { try await store.user(realm: realm, id: id) }

    public func listUsers(realm: String) async throws -> [User] { try await store.listUsers(realm: realm) }

    /// Disables or re-enables an account; a disabled account cannot log in. Disabling ends every browser
    /// session of the user at once. Throws `.notFound` when absent.
    public func setEnabled(_ enabled: Bool, realm: String, id: String) async throws {
        try await store.setEnabled(enabled, realm: realm, id: id)
        if !enabled {
            _ = try await sessions.deleteSessions(realm: realm, userId: id)
            await plugins.appSessions?.allSessionsEnded(realm: realm, userId: id)
            try await runDisableSteps(realm: realm, userId: id)
        }
    }

    /// Every part's `UserDisableStep`, all of them run; the first failure is thrown after.
    private func runDisableSteps(realm: String, userId: String) async throws {
        try await runEach(plugins.disableSteps) { try await $0.disabled(realm: realm, userId: userId) }
    }

    // MARK: - Administration (the `keyward users` commands); each is an audit event.

    public func disable(realm: String, username: String) async throws -> User {
        let user = try await existing(realm: realm, username: username)
        try await store.setEnabled(false, realm: realm, id: user.id)
        try await endEverything(realm: realm, userId: user.id)
        return user
    }

    /// What closing an account ends once its row says disabled: every browser and app session (the `UserDisabled`
    /// event), then what the other parts end with it.
    private func endEverything(realm: String, userId: String) async throws {
        await endSessions(.userDisabled, realm: realm, userId: userId, ended: try await sessions.deleteSessions(realm: realm, userId: userId))
        try await runDisableSteps(realm: realm, userId: userId)
    }

    /// The app sessions that came from the browser sessions just deleted (`ended` of them) end too; `event` records it.
    private func endSessions(_ event: AuditEvent.EventType, realm: String, userId: String, ended: Int) async {
        await plugins.appSessions?.allSessionsEnded(realm: realm, userId: userId)
        await audit.record(event, realm: realm, userId: userId, details: ["sessionsEnded": String(ended)])
    }

    public func enable(realm: String, username: String) async throws -> User {
        let user = try await existing(realm: realm, username: username)
        try await store.setEnabled(true, realm: realm, id: user.id)
        await audit.record(.userEnabled, realm: realm, userId: user.id)
        return user
    }

    /// Sets a new password and ends every browser session of the user, so a session opened with the old
    /// password does not outlive it.
    public func setPassword(realm: String, username: String, password: String) async throws -> User {
        try Self.checkLength(password)
        return try await setPassword(password, of: try await existing(realm: realm, username: username))
    }

    private func setPassword(_ password: String, of user: User) async throws -> User {
        try await changeEndingSessions(.passwordChanged, user) { user in
            try await store.setPasswordHash(hasher.hash(password), realm: user.realm, id: user.id)
        }
    }

    // MARK: - The admin API: users by id, changed only at the revision the caller read (`If-Match`).

    public func users(realm: String, query: UserQuery) async throws -> [User] { try await store.users(realm: realm, query: query) }

    /// The users `match` finds (all when nil), oldest first, from `offset`, at most `limit`, with how many it finds in all.
    public func search(realm: String, match: UserMatch?, offset: Int, limit: Int) async throws -> UserSearchPage {
        try await store.search(realm: realm, match: match, offset: offset, limit: limit)
    }

    /// Which of these ids (at most a thousand) are users of the realm.
    public func existingIds(realm: String, ids: [String]) async throws -> Set<String> {
        try await store.existingIds(realm: realm, ids: ids)
    }

    /// The profiles of these users; a user without one is missing from the answer.
    public func profiles(realm: String, userIds: [String]) async throws -> [String: UserProfile] {
        try await store.profiles(realm: realm, userIds: userIds)
    }

    /// Renames, disables or enables a user in one statement, only while it is at `expectedRevision` when one is
    /// given. Disabling ends what `disable` ends: every browser and app session and what the other parts end with it.
    public func update(realm: String, id: String, change: UserChange, expectedRevision: Int64?) async throws -> User {
        if let username = change.username { try Self.checkUsername(username) }
        let outcome: UserUpdateOutcome
        do {
            outcome = try await store.updateUser(realm: realm, id: id, change: change, expectedRevision: expectedRevision)
        } catch StoreError.conflict {
            throw UserError.exists(change.username ?? "")
        }
        switch outcome {
        case .notFound:
            throw UserError.notFound(id)
        case .stale(let current):
            throw UserError.stale(current: current)
        case .updated(let user):
            var changed: [String: String] = [:]
            if let username = change.username { changed["username"] = username }
            if change.profile != nil { changed["profile"] = "replaced" }
            if !changed.isEmpty { await audit.record(.userUpdated, realm: realm, userId: id, details: changed) }
            if change.enabled == true { await audit.record(.userEnabled, realm: realm, userId: id) }
            if change.enabled == false { try await endEverything(realm: realm, userId: id) }
            return user
        }
    }

    /// A new password for the user with this id; their browser sessions end.
    public func setPassword(realm: String, id: String, password: String) async throws -> User {
        try Self.checkLength(password)
        guard let user = try await store.user(realm: realm, id: id) else { throw UserError.notFound(id) }
        return try await setPassword(password, of: user)
    }

    /// Deletes the account and its browser sessions. The caller removes what other parts keep for the user
    /// (push devices) first.
    public func delete(realm: String, username: String) async throws -> User {
        try await delete(try await existing(realm: realm, username: username))
    }

    /// Deletes the account `user.id` names, whatever it is called by now.
    func delete(_ user: User) async throws -> User {
        let realm = user.realm
        // Disabled first: should the delete fail, the account is at least closed.
        try await store.setEnabled(false, realm: realm, id: user.id)
        let ended = try await sessions.deleteSessions(realm: realm, userId: user.id)
        try await store.deleteUser(realm: realm, id: user.id)
        await audit.record(.userDeleted, realm: realm, userId: user.id, details: ["username": user.username, "sessionsEnded": String(ended)])
        return user
    }

    /// Applies `change` to an existing user, then ends their browser sessions and records `event`.
    private func changeEndingSessions(_ event: AuditEvent.EventType, _ user: User, _ change: (User) async throws -> Void) async throws -> User {
        try await change(user)
        await endSessions(event, realm: user.realm, userId: user.id, ended: try await sessions.deleteSessions(realm: user.realm, userId: user.id))
        return user
    }

    private func existing(realm: String, username: String) async throws -> User {
        guard let user = try await store.user(realm: realm, username: username) else { throw UserError.notFound(username) }
        return user
    }

    private static func checkUsername(_ username: String) throws {
        guard (1...128).contains(username.count), username.unicodeScalars.allSatisfy({ !CharacterSet.controlCharacters.contains($0) && $0 != " " }) else {
            throw UserError.invalidUsername(username)
        }
    }

    private static func checkLength(_ password: String) throws {
        guard (1...1024).contains(password.utf8.count) else { throw UserError.invalidPassword }
    }

    /// Refuses a password `setPassword` would refuse, so a caller that writes other things first can check it before.
    static func checkPassword(_ password: String) throws { try checkLength(password) }

    /// Checks a password. bcrypt runs even for unknown users so response time does not reveal which usernames
    /// exist. A hash stored the old way is replaced on a successful check.
    public func authenticate(realm: String, username: String, password: String) async throws -> PasswordCheck {
        let user = try await store.user(realm: realm, username: username)
        let (hasher, stored) = (self.hasher, user?.passwordHash ?? decoyHash)
        let verdict: PasswordHasher.Verdict
        let upgrade: String?
        do throws(PasswordWork.Busy) {
            (verdict, upgrade) = try await passwordWork.run {
                let verdict = hasher.verify(password, against: stored)
                return (verdict, verdict == .matchesLegacy ? hasher.hash(password) : nil)
            }
        } catch {
            return .busy
        }
        guard let user, user.passwordHash != nil, verdict != .doesNotMatch else { return .invalidCredentials }
        if let upgrade { try await store.setPasswordHash(upgrade, realm: realm, id: user.id) }
        return user.enabled ? .authenticated(user) : .disabled(user)
    }

    public enum PasswordCheck: Sendable, Equatable {
        case authenticated(User)
        case disabled(User)
        case invalidCredentials
        /// `PasswordWork` is full: try again in a moment.
        case busy
    }

}

public enum UserError: Error, CustomStringConvertible, Equatable {
    case invalidUsername(String)
    case invalidPassword
    case exists(String)
    case notFound(String)
    /// The external identity is linked already, to this user.
    case identityExists(User)
    /// A new identity's e-mail address belongs to an account it may not be linked to by address; the person signs
    /// in with one of `providers` first and links the new one from the account page.
    case accountExists(providers: [String])
    /// The provider identity a user tried to link belongs to another user.
    case identityLinkedElsewhere
    /// The user changed since the revision the caller read (the admin API's `If-Match`).
    case stale(current: Int64)

    public var description: String {
        switch self {
        case .invalidUsername(let name): "username '\(name.prefix(64))' is invalid: 1-128 characters, no spaces or control characters"
        case .invalidPassword: "password must be 1-1024 bytes"
        case .exists(let name): "user '\(name.prefix(64))' exists already"
        case .notFound(let name): "user '\(name.prefix(64))' does not exist"
        case .identityExists(let user): "the identity is linked already, to user '\(user.username.prefix(64))'"
        case .accountExists(let providers): "an account with this e-mail address exists (it signs in with \(providers.joined(separator: ", ")))"
        case .identityLinkedElsewhere: "that account at the provider is linked to another user"
        case .stale: "the user changed since it was read (If-Match does not name its current ETag); read it again"
        }
    }
}
