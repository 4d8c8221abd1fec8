// Sign-in as one flow of steps: a first factor (a password, or an identity provider), then push MFA when the user
// has a device or the realm requires one, then the session. Accounts decides what comes next; the sign-in page,
// the provider callback and the push pages all ask here, and record how the user signed in (`amr`).

/// How the person first proved who they are.
enum FirstFactor: Sendable, Equatable {
    case password
    /// A sign-in with the identity provider of this alias; `credentialEntered` when the provider showed that the
    /// person gave it a credential during this sign-in (`ProviderIdentity.credentialEntered`).
    case provider(alias: String, credentialEntered: Bool)

    /// RFC 8176 `amr` value.
    var amr: String {
        switch self {
        case .password: "pwd"
        case .provider: "fed"
        }
    }

    /// Whether the session counts as signed in just now (`BrowserSession.authenticatedAt`), which deleting the
    /// account and linking a provider ask for. A provider that answered from its own open session proves only
    /// that the browser is signed in there — a browser left unlocked would pass.
    var provesPresence: Bool {
        switch self {
        case .password: true
        case .provider(_, let credentialEntered): credentialEntered
        }
    }
}

enum LoginFlow {
    /// Where a login goes once the first factor is verified: the push step when the user has a device, else
    /// enrollment or done by the realm's rule. Returns the stage the session takes and where the browser goes.
    static func afterFirstFactor(
        realm: String, returnTo: String?, hasDevice: Bool, settings: PushMFASettings
    ) -> (stage: BrowserSession.Stage, next: String) {
        guard !hasDevice else { return (.passwordVerified, PageURLs.pushWait(realm)) }
        return withoutDevice(realm: realm, returnTo: returnTo, settings: settings)
    }

    /// A login past its first factor whose user has no push device: enrollment comes next when the realm requires
    /// push MFA, otherwise the login is complete.
    static func withoutDevice(realm: String, returnTo: String?, settings: PushMFASettings) -> (stage: BrowserSession.Stage, next: String) {
        settings.requirePushMfa ? (.enrollmentRequired, PageURLs.enroll(realm)) : (.authenticated, returnTo ?? PageURLs.account(realm))
    }

    /// `withoutDevice` applied to a stored session; returns where to send the browser.
    static func continueWithoutDevice(_ session: inout BrowserSession, settings: PushMFASettings) -> String {
        let (stage, next) = withoutDevice(realm: session.realm, returnTo: session.returnTo, settings: settings)
        session.stage = stage
        return next
    }

    /// The phone approved the login (or completed an enrollment the realm required): a second factor, and the
    /// login is complete.
    static func secondFactorVerified(_ session: inout BrowserSession) {
        session.stage = .authenticated
        if !session.amr.contains("mfa") { session.amr.append("mfa") }
    }
}

/// Gives a user whose first factor checked out the session the flow's next step needs: one place for the sign-in
/// page and every provider callback, so both rotate sessions, cancel stale pushes and record `amr` alike.
struct SignInCompletion: Sendable {
    let sessions: BrowserSessionService
    let pushMFA: PushMFAService
    let audit: AuditLog

    /// `current` is the browser's stored session for the realm, if any: it moves to a new id (a push it had pending
    /// is cancelled, as a resend would); otherwise a new session begins. `newUser`: the user was created by this
    /// sign-in, so has no phone to look for. Returns the cookie and where to go next.
    func complete(
        user: User, factor: FirstFactor, realm: String, current: BrowserSession?, returnTo: String?, clientId: String?, userAgent: String?,
        newUser: Bool = false
    ) async throws -> (cookie: String, next: String) {
        var details = ["method": factor.amr]
        if case .provider(let alias, _) = factor { details["provider"] = alias }
        await audit.record(.userSignedIn, realm: realm, userId: user.id, details: details)
        let settings: PushMFASettings
        let hasDevice: Bool
        if newUser {
            (settings, hasDevice) = (try await pushMFA.settings(realm: realm), false)
        } else {
            let stored = try await pushMFA.settingsAndDevices(realm: realm, userId: user.id)
            (settings, hasDevice) = (stored.settings, !stored.devices.isEmpty)
        }
        if let current {
            // Best effort: if the cancel fails, the push simply expires.
            if let pending = current.challengeId { try? await pushMFA.cancelLogin(challengeId: pending, sessionId: current.idHash) }
            var fresh = current
            (fresh.challengeId, fresh.challengeSecret, fresh.enrollmentId, fresh.enrollmentSecret) = (nil, nil, nil, nil)
            fresh.userId = user.id
            fresh.amr = [factor.amr]
            fresh.authenticatedAt = factor.provesPresence ? sessions.now() : nil
            if let returnTo { fresh.returnTo = returnTo }
            let next: String
            (fresh.stage, next) = LoginFlow.afterFirstFactor(realm: realm, returnTo: fresh.returnTo, hasDevice: hasDevice, settings: settings)
            return (try await sessions.rotate(fresh).cookie, next)
        }
        let (stage, next) = LoginFlow.afterFirstFactor(realm: realm, returnTo: returnTo, hasDevice: hasDevice, settings: settings)
        let cookie = try await sessions.create(
            realm: realm, userId: user.id, stage: stage, returnTo: returnTo, clientId: clientId, amr: [factor.amr], userAgent: userAgent,
            authenticatedNow: factor.provesPresence
        ).cookie
        return (cookie, next)
    }
}
