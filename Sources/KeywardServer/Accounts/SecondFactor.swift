// The factor seam of the one login flow: Accounts runs the first factor (a password or an identity provider) and
// asks the realm's second factor what comes next; the part that implements the factor (push approval today,
// passkeys next) answers, runs its own step pages, and hands the session back through `LoginFlow`.
import Hummingbird
import Synchronization

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

/// What another part unlinks along with an identity (the Apple token behind it).
protocol IdentityUnlinkStep: Sendable {
    /// Runs once `identity` has been unlinked from its user (best effort).
    func unlinked(_ identity: ExternalIdentity) async
}

/// Where a finished sign-in continues beyond Keyward's own pages (an app's redirect URI, when the sign-in serves the
/// authorization endpoint). The sign-in pages' forms lead there through redirects, and Chromium checks a form
/// page's CSP `form-action` against every redirect the submission follows, so those pages must admit it.
protocol SignInContinuation: Sendable {
    /// The CSP sources a page of a sign-in that returns to `returnTo` must admit, as this request shows them; none
    /// when `returnTo` is not one of this continuation's.
    func formTargets(realm: String, returnTo: String, request: Request) -> [String]
}

/// Where other parts plug into Accounts while they are assembled, so that Accounts names none of them: the login
/// flow's second factor, and what they remove with a user or an identity. Filled before the server starts, read
/// while it serves.
final class AccountPlugins: Sendable {
    private struct Plugged {
        var secondFactor: (any SecondFactor)?
        var removalSteps: [any UserRemovalStep] = []
        var unlinkSteps: [any IdentityUnlinkStep] = []
        var continuations: [any SignInContinuation] = []
        var appSessions: (any AppSessionDirectory)?
    }

    private let plugged = Mutex(Plugged())

    /// The second factor as plugged in when each call is made (`NoSecondFactor` while none is): what the flow and
    /// the pages hold, so that nothing built before a part plugs its factor in can keep a stale one and let a
    /// sign-in skip it.
    var secondFactor: any SecondFactor { PluggedSecondFactor(plugins: self) }

    fileprivate var current: any SecondFactor { plugged.withLock { $0.secondFactor } ?? NoSecondFactor() }
    var removalSteps: [any UserRemovalStep] { plugged.withLock { $0.removalSteps } }
    var unlinkSteps: [any IdentityUnlinkStep] { plugged.withLock { $0.unlinkSteps } }
    var continuations: [any SignInContinuation] { plugged.withLock { $0.continuations } }
    var appSessions: (any AppSessionDirectory)? { plugged.withLock { $0.appSessions } }

    /// One second factor today; passkeys will make it a choice.
    func plug(secondFactor: any SecondFactor) {
        plugged.withLock {
            precondition($0.secondFactor == nil, "a second factor is plugged in already")
            $0.secondFactor = secondFactor
        }
    }

    /// Steps run in the order they were added (the order the parts are assembled in).
    func add(removalStep: any UserRemovalStep) { plugged.withLock { $0.removalSteps.append(removalStep) } }
    func add(unlinkStep: any IdentityUnlinkStep) { plugged.withLock { $0.unlinkSteps.append(unlinkStep) } }
    func add(continuation: any SignInContinuation) { plugged.withLock { $0.continuations.append(continuation) } }

    func plug(appSessions: any AppSessionDirectory) {
        plugged.withLock {
            precondition($0.appSessions == nil, "an app session directory is plugged in already")
            $0.appSessions = appSessions
        }
    }
}

/// Forwards each call to the factor plugged in at that moment.
private struct PluggedSecondFactor: SecondFactor {
    let plugins: AccountPlugins

    var amr: String { plugins.current.amr }

    func step(realm: String, userId: String, newUser: Bool) async throws -> SecondFactorStep {
        try await plugins.current.step(realm: realm, userId: userId, newUser: newUser)
    }

    func abandon(_ session: BrowserSession) async { await plugins.current.abandon(session) }

    func accountSection(realm: String, user: User, session: BrowserSession) async throws -> [String: Any] {
        try await plugins.current.accountSection(realm: realm, user: user, session: session)
    }
}

/// No second factor: every sign-in is complete after the first.
struct NoSecondFactor: SecondFactor {
    var amr: String { "" }
    func step(realm: String, userId: String, newUser: Bool) async throws -> SecondFactorStep { .skip }
    func abandon(_ session: BrowserSession) async {}
    func accountSection(realm: String, user: User, session: BrowserSession) async throws -> [String: Any] { [:] }
}
