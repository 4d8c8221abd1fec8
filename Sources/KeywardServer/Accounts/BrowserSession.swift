// A browser's session with one realm's pages, how far its login has got, and the store that keeps it.
import Foundation

/// A browser's session with one realm's pages. Only the SHA-256 of the cookie value is stored.
public struct BrowserSession: Sendable, Equatable {
    /// How far the login has got.
    public enum Stage: String, Sendable {
        /// No password yet (the login page's session, holding its CSRF token).
        case anonymous
        /// First factor verified; the second factor's step is next (`SecondFactorStep.verify`).
        case passwordVerified = "password-verified"
        /// First factor verified, and the realm requires a second factor the user does not have: enrolling one is
        /// next (`SecondFactorStep.enroll`).
        case enrollmentRequired = "enrollment-required"
        case authenticated
    }

    public var idHash: String
    public var realm: String
    public var userId: String?
    public var stage: Stage
    public var csrfToken: String
    /// Same-origin path to continue to after login.
    public var returnTo: String?
    /// The OAuth client the login is for (shown to the phone as `clientId`).
    public var clientId: String?
    /// The second factor's step under way in this session (for push: the login challenge and its watch secret, or
    /// the enrollment and its secret). Stored with the session; written and read by the factor's pages only.
    public var challengeId: String?
    public var challengeSecret: String?
    public var enrollmentId: String?
    public var enrollmentSecret: String?
    /// How the user proved who they are so far (RFC 8176 values: `pwd`, `fed`, then the second factor's, `mfa` for push).
    public var amr: [String] = []
    /// The browser's User-Agent when the session began, shortened; shown in the account page's session list.
    public var userAgent: String?
    /// When the user last gave a first factor in this session; actions that ask for a recent sign-in check it.
    public var authenticatedAt: Date?
    /// When the last first factor of this session completed, whatever it proved (OpenID Connect's `auth_time`: the
    /// authorization endpoint's `prompt=login` and `max_age` compare with it). Nil for sessions from before
    /// migration 16, which count from `createdAt`.
    public var signedInAt: Date?
    /// The session's lasting id: unlike `idHash` it survives the new cookie a sign-in gives, so what an app holds
    /// from the session (a refresh-token family) names it by this. Nil for sessions from before migration 16, which
    /// go by `idHash`.
    public var sid: String?
    public var createdAt: Date
    public var lastSeenAt: Date
    public var expiresAt: Date

    /// How recent the first factor must be for what changes how the account is reached or whether it exists
    /// (deleting it, linking a provider): a browser left signed in cannot do those.
    static let recentSignIn: TimeInterval = 600

    /// Forgets the second factor's step under way, when a new sign-in starts over this session.
    mutating func clearSecondFactorState() {
        (challengeId, challengeSecret, enrollmentId, enrollmentSecret) = (nil, nil, nil, nil)
    }

    /// When the person last signed in to this session.
    var signInTime: Date { signedInAt ?? createdAt }

    /// The id that names the session to what an app holds from it (`sid`).
    var lastingId: String { sid ?? idHash }

    func signedInRecently(now: Date) -> Bool {
        guard let authenticatedAt else { return false }
        return now.timeIntervalSince(authenticatedAt) <= Self.recentSignIn
    }
}

public protocol BrowserSessionStore: Sendable {
    func insertSession(_ session: BrowserSession) async throws
    /// The live session, or nil when it expired or its user is disabled or gone.
    func session(idHash: String, now: Date) async throws -> BrowserSession?
    /// Writes every mutable field of the session.
    func updateSession(_ session: BrowserSession) async throws
    func deleteSession(idHash: String) async throws
    /// The user's live sessions, newest first.
    func sessions(realm: String, userId: String, now: Date) async throws -> [BrowserSession]
    /// Ends one session of the user's (the id hash alone would let any signed-in user end any session); returns its
    /// lasting id (`BrowserSession.lastingId`), nil when there was none.
    func deleteSession(realm: String, userId: String, idHash: String) async throws -> String?
    /// Ends every session of a user; returns how many there were.
    func deleteSessions(realm: String, userId: String) async throws -> Int
    func deleteExpiredSessions(now: Date) async throws -> Int
}
