// The login, logout and account pages: password sign-in, then the second factor's step.
import Foundation
import HTTPTypes
import Hummingbird

/// `/realms/{realm}/login`, `/logout` and `/account`: password sign-in, then the push step or enrollment.
struct LoginPages: Sendable {
    let renderer: PageRenderer
    let browser: BrowserRequests
    let users: UserService
    let secondFactor: any SecondFactor
    let throttle: LoginThrottle
    let signIn: SignInCompletion
    let providers: IdentityProviderService
    let accountSessions: AccountSessions
    let accountIdentities: AccountIdentities
    /// What other parts add to the sign-in page.
    let plugins: AccountPlugins

    func register(on router: some RouterMethods<KeywardRequestContext>) {
        router.get("/realms/:realm/login") { request, context in try await showLogin(request, context) }
        router.post("/realms/:realm/login") { request, context in try await submitLogin(request, context) }
        router.post("/realms/:realm/logout") { request, context in try await logout(request, context) }
        router.get("/realms/:realm/account") { request, context in try await account(request, context) }
    }



    private func showLogin(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        let returnTo = BrowserRequests.safeReturnPath(request.uri.queryParameters.get("return_to"))
        let clientId = request.uri.queryParameters.get("client_id").map { String($0.prefix(128)) }
        // `reauth`: an action asks for a fresh sign-in (deleting the account), so a signed-in browser gets the form too.
        let reauthenticate = request.uri.queryParameters.get("reauth") == "1"
        let notice = request.uri.queryParameters.get("notice").flatMap(Self.notices) ?? (reauthenticate ? "Sign in again to continue." : nil)
        // An app's authorization request may name who signs in (OpenID Connect Core §3.1.2.1 `login_hint`).
        let username = request.uri.queryParameters.get("login_hint").map { String($0.prefix(128)) } ?? ""
        let targets = browser.formTargets(request, realm: realm, returnTo: returnTo)
        if var session = try await browser.session(request, realm: realm) {
            if session.stage == .authenticated, !reauthenticate {
                return renderer.redirect(to: returnTo ?? session.returnTo ?? PageURLs.account(realm))
            }
            // Back from the push step: keep this browser's session. The push it may have pending is still its
            // own, so the next password entry replaces it (submitLogin).
            if session.returnTo != returnTo || session.clientId != clientId {
                session.returnTo = returnTo
                session.clientId = clientId
                try await browser.sessions.save(session)
            }
            return try await loginPage(
                realm: realm, csrf: session.csrfToken, username: username, notice: notice, returnTo: returnTo, reauthenticate: reauthenticate,
                formTargets: targets
            )
        }
        // No stored session: the browser's state lives in a signed cookie, and nothing is written. A reload keeps
        // the state's nonce, so a form already open in another tab stays valid.
        var state = browser.preLogin(request, realm: realm) ?? browser.sessions.startPreLogin(realm: realm, returnTo: returnTo, clientId: clientId).state
        (state.returnTo, state.clientId) = (returnTo, clientId)
        let cookie = state.cookieValue(key: browser.sessions.preLoginKey)
        return try await loginPage(
            realm: realm, csrf: browser.sessions.csrfToken(for: state), username: username, notice: notice, headers: browser.setCookie(cookie),
            returnTo: returnTo, reauthenticate: reauthenticate, formTargets: targets
        )
    }

    private static func notices(_ key: String) -> String? {
        switch key {
        case "cancelled": "The login was cancelled."
        case "logged-out": "You are logged out."
        case "expired": "Your session ended. Please sign in again."
        case "account-deleted": "Your account was deleted."
        case "provider-refused": "The sign-in with the identity provider was cancelled or refused. Try again, or sign in another way."
        default: nil
        }
    }

    private func loginPage(
        realm: String, csrf: String, username: String = "", error: String? = nil, notice: String? = nil, status: HTTPResponse.Status = .ok,
        headers: HTTPFields = [:], returnTo: String? = nil, reauthenticate: Bool = false, formTargets: [String] = []
    ) async throws -> Response {
        var context: [String: Any] = ["realmName": realm, "action": PageURLs.login(realm), "csrf": csrf, "username": username]
        // One button per identity provider; each starts its flow, returning where this sign-in was going.
        let buttons: [[String: Any]] = try await providers.list(realm: realm).map { provider in
            let start = PageURLs.providerSignIn(realm, alias: provider.alias)
            var query = returnTo.map { ["return=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")] } ?? []
            // Signing in again for an action that asks for it: the provider must prompt, not answer from its session.
            if reauthenticate { query.append("reauth=1") }
            return ["alias": provider.alias, "name": provider.displayName, "href": start + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))]
        }
        context["hasProviders"] = !buttons.isEmpty
        context["providers"] = buttons
        for section in plugins.signInSections {
            context.merge(try await section.signInSection(realm: realm, csrf: csrf)) { accounts, _ in accounts }
        }
        if let error { context["error"] = error }
        if let notice { context["notice"] = notice }
        return renderer.page("login", title: "Sign in", realm: realm, context: context, status: status, headers: headers, formTargets: formTargets)
    }

    /// What a sign-in form is posted under: a stored session (back from the push step), or a pre-login state.
    private enum SignInHolder {
        case session(BrowserSession)
        case preLogin(PreLoginState)

        var session: BrowserSession? {
            if case .session(let session) = self { session } else { nil }
        }

        var returnTo: String? {
            switch self {
            case .session(let session): session.returnTo
            case .preLogin(let state): state.returnTo
            }
        }

        var clientId: String? {
            switch self {
            case .session(let session): session.clientId
            case .preLogin(let state): state.clientId
            }
        }
    }

    private func submitLogin(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        let holder: SignInHolder
        if let session = try await browser.session(request, realm: realm) {
            holder = .session(session)
        } else if let state = browser.preLogin(request, realm: realm) {
            holder = .preLogin(state)
        } else {
            return renderer.redirect(to: PageURLs.login(realm) + "?notice=expired")
        }
        let form = try await browser.form(request)
        let csrf: String
        switch holder {
        case .session(let session):
            guard BrowserSessionService.csrfMatches(form?["csrf"], session) else { return forbidden(realm) }
            csrf = session.csrfToken
        case .preLogin(let state):
            guard browser.sessions.csrfMatches(form?["csrf"], state) else { return forbidden(realm) }
            csrf = browser.sessions.csrfToken(for: state)
        }
        guard let form else { return forbidden(realm) }
        let targets = browser.formTargets(request, realm: realm, returnTo: holder.returnTo)
        let username = String((form["username"] ?? "").prefix(128))
        if let seconds = try await throttle.admit(realm: realm, username: username, address: browser.clientAddress(request, context)) {
            return try await loginPage(
                realm: realm, csrf: csrf, username: username,
                error: "Too many failed sign-ins. Try again in \(max(1, seconds / 60)) minute\(seconds > 60 ? "s" : "").", status: .tooManyRequests,
                headers: [.retryAfter: String(seconds)], formTargets: targets
            )
        }
        switch try await users.authenticate(realm: realm, username: username, password: form["password"] ?? "") {
        case .invalidCredentials:
            return try await loginPage(realm: realm, csrf: csrf, username: username, error: "Wrong username or password.", status: .unauthorized, formTargets: targets)
        case .busy:
            return try await loginPage(
                realm: realm, csrf: csrf, username: username, error: "Too many sign-ins at this moment. Please try again in a few seconds.",
                status: .serviceUnavailable, headers: [.retryAfter: "2"], formTargets: targets
            )
        case .disabled:
            return try await loginPage(
                realm: realm, csrf: csrf, username: username, error: "This account is disabled. Contact your administrator.", status: .forbidden,
                formTargets: targets
            )
        case .authenticated(let user):
            try await throttle.recordSuccess(realm: realm, username: username)
            let (cookie, next) = try await signIn.complete(
                user: user, factor: .password, realm: realm, current: holder.session, returnTo: holder.returnTo, clientId: holder.clientId,
                userAgent: request.headers[.userAgent]
            )
            return renderer.redirect(to: next, headers: browser.setCookie(cookie))
        }
    }

    private func logout(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        if let session = try await browser.session(request, realm: realm) {
            guard let form = try await browser.form(request), BrowserSessionService.csrfMatches(form["csrf"], session) else { return forbidden(realm) }
            try await browser.sessions.end(session)
        }
        return renderer.redirect(to: PageURLs.login(realm) + "?notice=logged-out", headers: browser.clearCookie)
    }

    private func account(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        guard let session = try await browser.session(request, realm: realm), session.stage == .authenticated, let userId = session.userId,
            let user = try await users.user(realm: realm, id: userId)
        else {
            return renderer.redirect(to: PageURLs.login(realm) + "?return_to=" + PageURLs.account(realm))
        }
        let notice: String? = switch request.uri.queryParameters.get("notice") {
        case "removed": "The device was removed."
        case "session-ended": "That session was ended; the browser is signed out."
        case "session-gone": "That session had ended already."
        case "app-ended": "The app is signed out: its tokens no longer work."
        case "app-gone": "That app was signed out already."
        case "linked": "The provider is linked: you can sign in with it from now on."
        case "link-cancelled": "Linking was cancelled at the provider; nothing changed."
        case "link-again": "You signed in again: choose the provider to link once more."
        case "unlinked": "The provider is unlinked: it no longer signs you in."
        case "unlinked-already": "That provider was unlinked already."
        case "passkey-added": "The passkey is added: you can sign in with it from now on."
        case "passkey-renamed": "The passkey is renamed."
        case "passkey-removed": "The passkey is removed: it no longer signs you in."
        default: nil
        }
        let (identities, linkable) = try await accountIdentities.rows(realm: realm, user: user, session: session)
        let apps = try await accountSessions.appRows(realm: realm, userId: user.id, current: session)
        var page: [String: Any] = [
            "username": user.username, "csrf": session.csrfToken, "logoutAction": "/realms/\(realm)/logout",
            "sessions": try await accountSessions.rows(realm: realm, userId: user.id, current: session),
            "apps": apps, "hasApps": !apps.isEmpty,
            "endAllAction": PageURLs.account(realm) + "/sessions/end-all",
            "identities": identities, "hasIdentities": !identities.isEmpty, "linkable": linkable, "hasLinkable": !linkable.isEmpty,
            "deleteURL": PageURLs.account(realm) + "/delete",
        ]
        page.merge(try await secondFactor.accountSection(realm: realm, user: user, session: session)) { accounts, _ in accounts }
        for section in plugins.accountSections {
            page.merge(try await section.accountSection(realm: realm, user: user, session: session)) { accounts, _ in accounts }
        }
        if let notice { page["notice"] = notice }
        return renderer.page("account", title: "Your account", realm: realm, context: page)
    }

    func forbidden(_ realm: String) -> Response {
        renderer.formExpired(realm: realm, backToAccount: false)
    }
}
