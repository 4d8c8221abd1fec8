// Sign-in as one flow of steps: a first factor (a password, or an identity provider), then the realm's second factor
// (`SecondFactor`: its step when the user has it, enrollment when the realm requires it), then the session.
// Accounts decides what comes next; the sign-in page, the provider callback and the second factor's pages all ask
// here, and record how the user signed in (`amr`).
/// How the person first proved who they are.
enum FirstFactor: Sendable, Equatable {
    case password
    /// A sign-in with the identity provider of this alias; `credentialEntered` when the provider showed that the
    /// person gave it a credential during this sign-in (`ProviderIdentity.credentialEntered`).
    case provider(alias: String, credentialEntered: Bool)
    /// A passkey (a key the person's device holds); `userVerified`: the authenticator verified the person too
    /// (biometrics or a PIN), so the passkey stands for two factors and no second step follows unless
    /// `secondStepAsked` (the realm asks for its second factor after a passkey too).
    case passkey(userVerified: Bool, secondStepAsked: Bool = false)

    /// RFC 8176 `amr` values: `pwd`, `fed`, or `hwk` (a hardware-protected key) with `user` when the authenticator
    /// verified the person.
    var amr: [String] {
        switch self {
        case .password: ["pwd"]
        case .provider: ["fed"]
        case .passkey(let userVerified, _): userVerified ? ["hwk", "user"] : ["hwk"]
        }
    }

    /// The first factor alone completes the sign-in: a passkey with user verification is possession and inherence
    /// (or knowledge) at once.
    var completesSignIn: Bool {
        if case .passkey(true, false) = self { return true }
        return false
    }

    /// Whether the session counts as signed in just now (`BrowserSession.authenticatedAt`), which deleting the
    /// account and linking a provider ask for. A provider that answered from its own open session proves only
    /// that the browser is signed in there — a browser left unlocked would pass.
    var provesPresence: Bool {
        switch self {
        case .password: true
        case .provider(_, let credentialEntered): credentialEntered
        case .passkey(let userVerified, _): userVerified
        }
    }
}

enum LoginFlow {
    /// The stage a session takes for the second factor's `step`, and where the browser goes.
    static func afterFirstFactor(realm: String, returnTo: String?, step: SecondFactorStep) -> (stage: BrowserSession.Stage, next: String) {
        switch step {
        case .verify(let next): (.passwordVerified, next)
        case .enroll(let next): (.enrollmentRequired, next)
        case .skip: (.authenticated, returnTo ?? PageURLs.account(realm))
        }
    }

    /// `afterFirstFactor` applied to a stored session whose second factor changed under it (a phone removed during
    /// the push step); returns where to send the browser.
    static func continueAfterFirstFactor(_ session: inout BrowserSession, step: SecondFactorStep) -> String {
        let (stage, next) = afterFirstFactor(realm: session.realm, returnTo: session.returnTo, step: step)
        session.stage = stage
        return next
    }

    /// The second factor's step succeeded (or an enrollment the realm required completed): the login is complete,
    /// and records the factor's `amr`.
    static func secondFactorVerified(_ session: inout BrowserSession, amr: String) {
        session.stage = .authenticated
        if !session.amr.contains(amr) { session.amr.append(amr) }
    }
}

/// Gives a user whose first factor checked out the session the flow's next step needs: one place for the sign-in
/// page and every provider callback, so both rotate sessions, abandon stale second-factor steps and record `amr`
/// alike.
struct SignInCompletion: Sendable {
    let sessions: BrowserSessionService
    let secondFactor: any SecondFactor
    let audit: AuditLog

    /// `current` is the browser's stored session for the realm, if any: it moves to a new id (a second-factor step
    /// it had under way is abandoned, as a resend would); otherwise a new session begins. `newUser`: the user was
    /// created by this sign-in. Returns the cookie and where to go next.
    func complete(
        user: User, factor: FirstFactor, realm: String, current: BrowserSession?, returnTo: String?, clientId: String?, userAgent: String?,
        newUser: Bool = false
    ) async throws -> (cookie: String, next: String) {
        var details = ["method": factor.amr.joined(separator: " ")]
        if case .provider(let alias, _) = factor { details["provider"] = alias }
        await audit.record(.userSignedIn, realm: realm, userId: user.id, details: details)
        let step = factor.completesSignIn ? .skip : try await secondFactor.step(realm: realm, userId: user.id, newUser: newUser, after: factor.amr)
        if let current {
            await secondFactor.abandon(current)
            var fresh = current
            fresh.clearSecondFactorState()
            // Another person signing in on this browser starts a session of their own: what an app holds from the
            // last one's stays with it.
            if fresh.userId != user.id || fresh.sid == nil { fresh.sid = BrowserSessionService.randomToken() }
            fresh.userId = user.id
            fresh.amr = factor.amr
            let now = sessions.now()
            fresh.authenticatedAt = factor.provesPresence ? now : nil
            fresh.signedInAt = now
            if let returnTo { fresh.returnTo = returnTo }
            let next: String
            (fresh.stage, next) = LoginFlow.afterFirstFactor(realm: realm, returnTo: fresh.returnTo, step: step)
            return (try await sessions.rotate(fresh).cookie, next)
        }
        let (stage, next) = LoginFlow.afterFirstFactor(realm: realm, returnTo: returnTo, step: step)
        let cookie = try await sessions.create(
            realm: realm, userId: user.id, stage: stage, returnTo: returnTo, clientId: clientId, amr: factor.amr, userAgent: userAgent,
            authenticatedNow: factor.provesPresence
        ).cookie
        return (cookie, next)
    }
}
