// The factor seam of the one login flow: Accounts runs the first factor (a password or an identity provider) and
// asks the realm's second factor what comes next; the part that implements the factor (push approval today,
// passkeys next) answers, runs its own step pages, and hands the session back through `LoginFlow`.

/// What the login flow does after the first factor, as the second factor says.
enum SecondFactorStep: Sendable, Equatable {
    /// The user has the factor: its step comes next, at `next`.
    case verify(next: String)
    /// The realm requires the factor and the user has none: enrolling one comes next, at `next`.
    case enroll(next: String)
    /// The factor is not asked for: the login is complete.
    case skip
}

/// A second factor of the login flow, implemented by another part. Accounts names no implementation: the runtime
/// hands one in.
protocol SecondFactor: Sendable {
    /// The RFC 8176 `amr` value the login records once the factor's step succeeds.
    var amr: String { get }

    /// What comes after the first factor for `userId`; `newUser`: the user was created by this sign-in, so holds
    /// nothing of the factor's yet.
    func step(realm: String, userId: String, newUser: Bool) async throws -> SecondFactorStep

    /// A sign-in starts again in a browser whose session had a step under way: the factor cancels it (best effort).
    func abandon(_ session: BrowserSession) async

    /// The account page's section for this factor: the values its part of the page reads (for push, the phones and
    /// where to add or remove one).
    func accountSection(realm: String, user: User, session: BrowserSession) async throws -> [String: Any]
}

/// What another part holds for a user and removes with them (`UserRemoval`): push phones, tokens at a provider.
protocol UserRemovalStep: Sendable {
    /// Runs before the user row goes, with the identities it still has; returns what to do once it has gone (best
    /// effort, never holding the deletion up), if anything.
    func removing(realm: String, user: User, identities: [ExternalIdentity]) async throws -> (@Sendable () async -> Void)?
}
