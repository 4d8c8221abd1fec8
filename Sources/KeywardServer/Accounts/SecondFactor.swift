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

    /// `step`, after a sign-in that recorded the `amr` values `used`: a factor whose own value is among them was
    /// just used (a passkey as the first factor), so it cannot be the second.
    func step(realm: String, userId: String, newUser: Bool, after used: [String]) async throws -> SecondFactorStep

    /// A sign-in starts again in a browser whose session had a step under way: the factor cancels it (best effort).
    func abandon(_ session: BrowserSession) async

    /// The account page's section for this factor: the values its part of the page reads (for push, the phones and
    /// where to add or remove one).
    func accountSection(realm: String, user: User, session: BrowserSession) async throws -> [String: Any]

    /// Where this factor stands among the plugged ones for `realm`: when several have a step for the user, the
    /// highest goes first. 0 unless the factor says otherwise.
    func precedence(realm: String) async throws -> Int
}

extension SecondFactor {
    func precedence(realm: String) async throws -> Int { 0 }

    func step(realm: String, userId: String, newUser: Bool, after used: [String]) async throws -> SecondFactorStep {
        used.contains(amr) ? .skip : try await step(realm: realm, userId: userId, newUser: newUser)
    }
}

/// What another part adds to the sign-in page (the passkey button), as values its part of the template reads.
protocol SignInPageSection: Sendable {
    func signInSection(realm: String, csrf: String) async throws -> [String: Any]
}

/// Ways into an account that another part holds (passkeys): unlinking a provider counts them, so the last way in
/// is never taken away.
protocol SignInMethods: Sendable {
    /// How many ways into `userId`'s account this part holds.
    func count(realm: String, userId: String) async throws -> Int
}

/// What another part holds for a user and removes with them (`UserRemoval`): push phones, tokens at a provider.
protocol UserRemovalStep: Sendable {
    /// Runs before the user row goes, with the identities it still has; returns what to do once it has gone (best
    /// effort, never holding the deletion up), if anything.
    func removing(realm: String, user: User, identities: [ExternalIdentity]) async throws -> (@Sendable () async -> Void)?
}

/// What another part adds to the account page (the person's registered devices), as values its part of the
/// template reads.
protocol AccountPageSection: Sendable {
    func accountSection(realm: String, user: User, session: BrowserSession) async throws -> [String: Any]
}

/// What another part ends when a user is disabled (`keyward users disable`, the panic button): the devices they
/// signed in on, with everything their keys hold.
protocol UserDisableStep: Sendable {
    func disabled(realm: String, userId: String) async throws
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
        var secondFactors: [any SecondFactor] = []
        var signInMethods: [any SignInMethods] = []
        var signInSections: [any SignInPageSection] = []
        var removalSteps: [any UserRemovalStep] = []
        var disableSteps: [any UserDisableStep] = []
        var accountSections: [any AccountPageSection] = []
        var unlinkSteps: [any IdentityUnlinkStep] = []
        var continuations: [any SignInContinuation] = []
        var appSessions: (any AppSessionDirectory)?
    }

    private let plugged = Mutex(Plugged())

    /// The second factors as plugged in when each call is made (none: every sign-in completes after the first
    /// factor): what the flow and the pages hold, so that nothing built before a part plugs its factor in can keep a
    /// stale list and let a sign-in skip it.
    var secondFactor: any SecondFactor { PluggedSecondFactors(plugins: self) }

    fileprivate var current: [any SecondFactor] { plugged.withLock { $0.secondFactors } }
    var signInMethods: [any SignInMethods] { plugged.withLock { $0.signInMethods } }
    var signInSections: [any SignInPageSection] { plugged.withLock { $0.signInSections } }
    var removalSteps: [any UserRemovalStep] { plugged.withLock { $0.removalSteps } }
    var disableSteps: [any UserDisableStep] { plugged.withLock { $0.disableSteps } }
    var accountSections: [any AccountPageSection] { plugged.withLock { $0.accountSections } }
    var unlinkSteps: [any IdentityUnlinkStep] { plugged.withLock { $0.unlinkSteps } }
    var continuations: [any SignInContinuation] { plugged.withLock { $0.continuations } }
    var appSessions: (any AppSessionDirectory)? { plugged.withLock { $0.appSessions } }

    /// Factors are asked in the order they were plugged in, then by `precedence`.
    func plug(secondFactor: any SecondFactor) { plugged.withLock { $0.secondFactors.append(secondFactor) } }
    func add(signInMethods: any SignInMethods) { plugged.withLock { $0.signInMethods.append(signInMethods) } }
    func add(signInSection: any SignInPageSection) { plugged.withLock { $0.signInSections.append(signInSection) } }

    /// The steps other second factors have for the user, beside the one at `current` (a way on when this one's
    /// authenticator is out of reach): their pages' paths. `used`: the session's `amr` so far.
    func otherSteps(realm: String, userId: String, besides current: String, after used: [String]) async throws -> [String] {
        var steps: [String] = []
        for factor in plugged.withLock({ $0.secondFactors }) {
            if case .verify(let next) = try await factor.step(realm: realm, userId: userId, newUser: false, after: used), next != current {
                steps.append(next)
            }
        }
        return steps
    }

    /// The ways into `userId`'s account the other parts hold.
    func signInMethodCount(realm: String, userId: String) async throws -> Int {
        var total = 0
        for methods in signInMethods { total += try await methods.count(realm: realm, userId: userId) }
        return total
    }

    /// Steps run in the order they were added (the order the parts are assembled in).
    func add(removalStep: any UserRemovalStep) { plugged.withLock { $0.removalSteps.append(removalStep) } }
    func add(disableStep: any UserDisableStep) { plugged.withLock { $0.disableSteps.append(disableStep) } }
    func add(accountSection: any AccountPageSection) { plugged.withLock { $0.accountSections.append(accountSection) } }
    func add(unlinkStep: any IdentityUnlinkStep) { plugged.withLock { $0.unlinkSteps.append(unlinkStep) } }
    func add(continuation: any SignInContinuation) { plugged.withLock { $0.continuations.append(continuation) } }

    func plug(appSessions: any AppSessionDirectory) {
        plugged.withLock {
            precondition($0.appSessions == nil, "an app session directory is plugged in already")
            $0.appSessions = appSessions
        }
    }
}

/// The plugged second factors as one: the step of the first factor (by precedence, then plugging order) that has
/// one for the user to take; failing that, the first enrollment a realm requires; failing that, none. A user who
/// holds any factor is never sent to enroll another.
private struct PluggedSecondFactors: SecondFactor {
    let plugins: AccountPlugins

    var amr: String { plugins.current.first?.amr ?? "" }

    func step(realm: String, userId: String, newUser: Bool) async throws -> SecondFactorStep {
        try await step(realm: realm, userId: userId, newUser: newUser, after: [])
    }

    func step(realm: String, userId: String, newUser: Bool, after used: [String]) async throws -> SecondFactorStep {
        var enrollment: SecondFactorStep?
        for factor in try await ordered(realm: realm) {
            switch try await factor.step(realm: realm, userId: userId, newUser: newUser, after: used) {
            case .verify(let next): return .verify(next: next)
            case .enroll(let next): enrollment = enrollment ?? .enroll(next: next)
            case .skip: continue
            }
        }
        return enrollment ?? .skip
    }

    func abandon(_ session: BrowserSession) async {
        for factor in plugins.current { await factor.abandon(session) }
    }

    func accountSection(realm: String, user: User, session: BrowserSession) async throws -> [String: Any] {
        var section: [String: Any] = [:]
        for factor in plugins.current {
            section.merge(try await factor.accountSection(realm: realm, user: user, session: session)) { first, _ in first }
        }
        return section
    }

    private func ordered(realm: String) async throws -> [any SecondFactor] {
        var ranked: [(rank: Int, position: Int, factor: any SecondFactor)] = []
        for (position, factor) in plugins.current.enumerated() {
            ranked.append((try await factor.precedence(realm: realm), position, factor))
        }
        return ranked.sorted { ($0.rank, -$0.position) > ($1.rank, -$1.position) }.map(\.factor)
    }
}

/// No second factor: every sign-in is complete after the first.
struct NoSecondFactor: SecondFactor {
    var amr: String { "" }
    func step(realm: String, userId: String, newUser: Bool) async throws -> SecondFactorStep { .skip }
    func abandon(_ session: BrowserSession) async {}
    func accountSection(realm: String, user: User, session: BrowserSession) async throws -> [String: Any] { [:] }
}
