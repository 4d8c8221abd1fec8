// What comes after the password: the push step, enrollment, or done, by the user's devices and the realm's rule.
// Accounts decides it; the sign-in page and the push pages both ask here.
enum LoginFlow {
    /// Where a login goes once the password is verified: the push step when the user has a device, else
    /// enrollment or done by the realm's rule. Returns the stage the session takes and where the browser goes.
    static func afterPassword(
        realm: String, returnTo: String?, hasDevice: Bool, settings: PushMFASettings
    ) -> (stage: BrowserSession.Stage, next: String) {
        guard !hasDevice else { return (.passwordVerified, PageURLs.pushWait(realm)) }
        return withoutDevice(realm: realm, returnTo: returnTo, settings: settings)
    }

    /// A password-verified login whose user has no push device: enrollment comes next when the realm requires push
    /// MFA, otherwise the login is complete.
    static func withoutDevice(realm: String, returnTo: String?, settings: PushMFASettings) -> (stage: BrowserSession.Stage, next: String) {
        settings.requirePushMfa ? (.enrollmentRequired, PageURLs.enroll(realm)) : (.authenticated, returnTo ?? PageURLs.account(realm))
    }

    /// `withoutDevice` applied to a stored session; returns where to send the browser.
    static func continueWithoutDevice(_ session: inout BrowserSession, settings: PushMFASettings) -> String {
        let (stage, next) = withoutDevice(realm: session.realm, returnTo: session.returnTo, settings: settings)
        session.stage = stage
        return next
    }
}
