// What comes after the password: the push step, enrollment, or done, by the user's devices and the realm's rule.
// Accounts decides it; the sign-in page and the push pages both ask here.
enum LoginFlow {
    /// Where a login goes once the password is verified: the push step when the user has a device, else
    /// enrollment or done by the realm's rule. Sets the session's stage; returns where to send the browser.
    static func continueAfterPassword(_ session: inout BrowserSession, hasDevice: Bool, settings: PushMFASettings) -> String {
        guard !hasDevice else {
            session.stage = .passwordVerified
            return PageURLs.pushWait(session.realm)
        }
        return continueWithoutDevice(&session, settings: settings)
    }

    /// A password-verified login whose user has no push device: enrollment comes next when the realm requires push
    /// MFA, otherwise the login is complete. Returns where to send the browser.
    static func continueWithoutDevice(_ session: inout BrowserSession, settings: PushMFASettings) -> String {
        if settings.requirePushMfa {
            session.stage = .enrollmentRequired
            return PageURLs.enroll(session.realm)
        }
        session.stage = .authenticated
        return session.returnTo ?? PageURLs.account(session.realm)
    }
}
