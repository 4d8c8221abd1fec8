// Browser sessions: pre-login state, creation, rotation on sign-in, lifetimes, ending them, CSRF checks.
import Crypto
import Foundation
import KeywardJOSE

/// Browser sessions: stored once the password is verified (before that the browser holds a signed
/// `PreLoginState`), moved to a fresh id whenever a stored session signs in again (session fixation), ended by
/// logout, by 30 minutes of inactivity, or 8 hours after creation.
public struct BrowserSessionService: Sendable {
    public static let idleLifetime: TimeInterval = 30 * 60
    public static let absoluteLifetime: TimeInterval = 8 * 3600

    let store: any BrowserSessionStore
    let clock: any KeywardClock
    /// Signs pre-login states; derived from the master key, the same on every node.
    let preLoginKey: SymmetricKey
    /// What apps hold from the sessions (`AppSessionDirectory`), ended with them.
    let plugins: AccountPlugins

    init(store: any BrowserSessionStore, clock: any KeywardClock, preLoginKey: SymmetricKey, plugins: AccountPlugins) {
        self.store = store
        self.clock = clock
        self.preLoginKey = preLoginKey
        self.plugins = plugins
    }

    /// A stored session for a user whose password was just verified; returns the cookie value (shown to the
    /// browser once) and the record.
    /// Enough of a User-Agent to tell browsers apart on the account page; the rest is not kept.
    static let userAgentLength = 200

    func create(
        realm: String, userId: String, stage: BrowserSession.Stage, returnTo: String?, clientId: String?, amr: [String], userAgent: String?,
        authenticatedNow: Bool = true
    ) async throws -> (cookie: String, session: BrowserSession) {
        let cookie = Self.randomToken()
        let now = clock.now()
        let session = BrowserSession(
            idHash: Self.hash(cookie), realm: realm, userId: userId, stage: stage, csrfToken: Self.randomToken(),
            returnTo: returnTo, clientId: clientId, amr: amr, userAgent: userAgent.map { String($0.prefix(Self.userAgentLength)) },
            authenticatedAt: authenticatedNow ? now : nil, signedInAt: now, sid: Self.randomToken(),
            createdAt: now, lastSeenAt: now,
            expiresAt: now.addingTimeInterval(Self.idleLifetime)
        )
        try await store.insertSession(session)
        return (cookie, session)
    }

    /// A new pre-login state and the cookie value that carries it. Writes nothing.
    func startPreLogin(realm: String, returnTo: String?, clientId: String?) -> (cookie: String, state: PreLoginState) {
        let state = PreLoginState(realm: realm, issuedAt: clock.now(), returnTo: returnTo, clientId: clientId)
        return (state.cookieValue(key: preLoginKey), state)
    }

    /// The pre-login state a cookie carries for `realm`, if it is genuine and current.
    func preLogin(cookie: String, realm: String) -> PreLoginState? {
        PreLoginState(cookie: cookie, realm: realm, key: preLoginKey, now: clock.now())
    }

    func csrfToken(for state: PreLoginState) -> String { state.csrfToken(key: preLoginKey) }

    func csrfMatches(_ submitted: String?, _ state: PreLoginState) -> Bool { state.csrfMatches(submitted, key: preLoginKey) }

    /// The live session for a cookie value in `realm`; refreshes its idle deadline.
    public func session(cookie: String, realm: String) async throws -> BrowserSession? {
        guard cookie.utf8.count <= 128, !PreLoginState.isPreLoginValue(cookie) else { return nil }
        let now = clock.now()
        guard var session = try await store.session(idHash: Self.hash(cookie), now: now), session.realm == realm else { return nil }
        guard now.timeIntervalSince(session.createdAt) < Self.absoluteLifetime else {
            try await store.deleteSession(idHash: session.idHash)
            return nil
        }
        if now.timeIntervalSince(session.lastSeenAt) > 60 {
            session.lastSeenAt = now
            session.expiresAt = min(now.addingTimeInterval(Self.idleLifetime), session.createdAt.addingTimeInterval(Self.absoluteLifetime))
            try await store.updateSession(session)
        }
        return session
    }

    public func save(_ session: BrowserSession) async throws {
        try await store.updateSession(session)
    }

    /// Moves the session to a fresh id (and CSRF token) after the password is verified; the old cookie stops working.
    public func rotate(_ session: BrowserSession) async throws -> (cookie: String, session: BrowserSession) {
        let cookie = Self.randomToken()
        var rotated = session
        rotated.idHash = Self.hash(cookie)
        rotated.csrfToken = Self.randomToken()
        rotated.lastSeenAt = clock.now()
        try await store.insertSession(rotated)
        try await store.deleteSession(idHash: session.idHash)
        return (cookie, rotated)
    }

    /// Ends the session and what apps hold from it.
    public func end(_ session: BrowserSession) async throws {
        try await store.deleteSession(idHash: session.idHash)
        if let userId = session.userId {
            await plugins.appSessions?.browserSessionsEnded(realm: session.realm, userId: userId, browserSessionIds: [session.lastingId])
        }
    }

    func now() -> Date { clock.now() }

    /// The user's live sessions in `realm` (for the account page's list), newest first.
    public func sessions(realm: String, userId: String) async throws -> [BrowserSession] {
        try await store.sessions(realm: realm, userId: userId, now: clock.now())
    }

    /// Ends one of the user's sessions, named by its id hash; false when the user has no such session.
    public func end(realm: String, userId: String, idHash: String) async throws -> Bool {
        guard let ended = try await store.deleteSession(realm: realm, userId: userId, idHash: idHash) else { return false }
        await plugins.appSessions?.browserSessionsEnded(realm: realm, userId: userId, browserSessionIds: [ended])
        return true
    }

    /// Ends every session of the user in `realm` ("sign out everywhere"); returns how many there were.
    public func endAll(realm: String, userId: String) async throws -> Int {
        let ended = try await store.deleteSessions(realm: realm, userId: userId)
        await plugins.appSessions?.allSessionsEnded(realm: realm, userId: userId)
        return ended
    }

    /// Constant-time comparison of a submitted CSRF token.
    public static func csrfMatches(_ submitted: String?, _ session: BrowserSession) -> Bool {
        guard let submitted else { return false }
        return ConstantTime.equal(submitted, session.csrfToken)
    }

    static func randomToken() -> String {
        Base64URL.encode(SecureRandom.bytes(32))
    }

    static func hash(_ value: String) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Array(value.utf8))))
    }
}
