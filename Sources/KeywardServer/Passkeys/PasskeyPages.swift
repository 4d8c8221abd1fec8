// The passkey pages: the second step of a sign-in, and renaming and removing a passkey on the account page.
import Foundation
import HTTPTypes
import Hummingbird

/// `/realms/{realm}/login/passkey` (the sign-in's second step with a passkey; the ceremony runs in the page's script
/// against the JSON endpoints) and the account page's forms for a passkey. Thin: session and form in, service call,
/// page or redirect out.
struct PasskeyPages: Sendable {
    let renderer: PageRenderer
    let browser: BrowserRequests
    let service: PasskeyService
    let plugins: AccountPlugins
    let clock: any KeywardClock

    func register(on router: some RouterMethods<KeywardRequestContext>) {
        router.get("/realms/:realm/login/passkey") { request, context in try await step(request, context) }
        router.post("/realms/:realm/login/passkey") { request, context in try await cancel(request, context) }
        router.post("/realms/:realm/account/passkeys/:id/rename") { request, context in try await rename(request, context) }
        router.post("/realms/:realm/account/passkeys/:id/remove") { request, context in try await remove(request, context) }
    }

    private func step(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        guard let session = try await browser.session(request, realm: realm), PasskeySecondFactor.isOpen(for: session), let userId = session.userId,
            let user = try await service.users.user(realm: realm, id: userId)
        else { return renderer.redirect(to: PageURLs.login(realm) + "?notice=expired") }
        let others = try await plugins.otherSteps(realm: realm, userId: userId, besides: PageURLs.passkeyStep(realm), after: session.amr)
        let alternatives: [[String: String]] = others.compactMap { path in
            path == PageURLs.pushWait(realm) ? ["href": path, "label": "Approve on your phone instead"] : nil
        }
        return renderer.page("passkey-step", title: "Confirm with your passkey", realm: realm, context: [
            "username": user.username, "csrf": session.csrfToken, "action": PageURLs.passkeyStep(realm),
            "optionsURL": "/realms/\(realm)/webauthn/authentication/options", "url": "/realms/\(realm)/webauthn/authentication",
            "alternatives": alternatives,
        ])
    }

    /// Cancel: the half-finished sign-in ends.
    private func cancel(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        guard let session = try await browser.session(request, realm: realm) else { return renderer.redirect(to: PageURLs.login(realm) + "?notice=expired") }
        guard let form = try await browser.form(request), BrowserSessionService.csrfMatches(form["csrf"], session) else {
            return renderer.formExpired(realm: realm, backToAccount: false)
        }
        await plugins.secondFactor.abandon(session)
        try await browser.sessions.end(session)
        return renderer.redirect(to: PageURLs.login(realm) + "?notice=cancelled", headers: browser.clearCookie)
    }

    /// The signed-in session of an account-page form, its CSRF token matched.
    private func accountForm(_ request: Request, realm: String) async throws -> (session: BrowserSession, userId: String, form: [String: String])? {
        guard let (session, userId) = try await browser.signedIn(request, realm: realm),
            let form = try await browser.form(request), BrowserSessionService.csrfMatches(form["csrf"], session)
        else { return nil }
        return (session, userId, form)
    }

    private func rename(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        guard let (_, userId, form) = try await accountForm(request, realm: realm) else { return renderer.formExpired(realm: realm, backToAccount: true) }
        guard try await service.rename(realm: realm, userId: userId, credentialId: context.parameters.get("id") ?? "", name: form["name"] ?? "") else {
            return notFound(realm, text: "That passkey is not one of yours, or the name was empty.")
        }
        return renderer.redirect(to: PageURLs.account(realm) + "?notice=passkey-renamed")
    }

    private func remove(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        guard let (session, userId, _) = try await accountForm(request, realm: realm) else { return renderer.formExpired(realm: realm, backToAccount: true) }
        // Taking a way in away: only soon after a sign-in, as with phones and providers.
        guard session.signedInRecently(now: clock.now()) else { return renderer.signInAgain(realm) }
        switch try await service.removeUnlessLastWayIn(realm: realm, userId: userId, credentialId: context.parameters.get("id") ?? "") {
        case .removed:
            return renderer.redirect(to: PageURLs.account(realm) + "?notice=passkey-removed")
        case .lastWayIn:
            return renderer.page("message", title: "Cannot remove", realm: realm, context: [
                "heading": "This is how you sign in",
                "text": "This passkey is the only way into your account. Add another passkey or link a provider first.", "isError": true,
                "link": ["href": PageURLs.account(realm), "label": "Back to your account"],
            ], status: .conflict)
        case .notFound:
            return notFound(realm, text: "That passkey is not one of yours, or it was removed already.")
        }
    }

    private func notFound(_ realm: String, text: String) -> Response {
        renderer.page("message", title: "Not found", realm: realm, context: [
            "heading": "Passkey not found", "text": text, "isError": true, "link": ["href": PageURLs.account(realm), "label": "Back to your account"],
        ], status: .notFound)
    }
}
