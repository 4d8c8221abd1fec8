// The routes that start and finish sign-in or account linking with an identity provider.
import Foundation
import HTTPTypes
import Hummingbird

/// `/realms/{realm}/v1/auth/{alias}` starts a sign-in with an identity provider; `…/callback` (GET, or POST for
/// providers that answer with `form_post`, such as Apple — through `ProviderCallbackRepost` first when the
/// cross-site POST came without its cookie) finishes it and hands the user to the one login flow. The account
/// page's `POST /realms/{realm}/account/link/{alias}` starts the same flow to link the provider to the signed-in
/// user instead, and the same callback finishes it. Thin: the checks are `ProviderSignIn`'s and `SignInTransaction`'s.
struct ProviderSignInRoutes: Sendable {
    let signIn: ProviderSignIn
    let completion: SignInCompletion
    let browser: BrowserRequests
    let renderer: PageRenderer
    let clock: any KeywardClock
    let limiter: ProviderCallbackLimiter

    func register(on router: some RouterMethods<KeywardRequestContext>) {
        router.get("/realms/:realm/v1/auth/:alias") { request, context in try await start(request, context) }
        router.post("/realms/:realm/account/link/:alias") { request, context in try await startLink(request, context) }
        router.get("/realms/:realm/v1/auth/:alias/callback") { request, context in
            try await callback(request, context, parameters: Self.parameters(request.uri.queryParameters.map { (String($0.key), String($0.value)) }))
        }
        router.post("/realms/:realm/v1/auth/:alias/callback") { request, context in
            guard var form = try await browser.form(request) else {
                return await failurePage(SignInFailure(.invalidRequest, "the callback's form cannot be read"), context, realm: nil)
            }
            // A form_post answer comes cross-site without the Lax cookie: one hop through Keyward's own page.
            if ProviderCallbackRepost.needsRepost(form: form, request: request, secureCookies: browser.secureCookies) {
                return ProviderCallbackRepost.page(action: request.uri.path, form: form)
            }
            form.removeValue(forKey: ProviderCallbackRepost.repostMarker)
            return try await callback(request, context, parameters: Self.parameters(form.map { ($0.key, $0.value) }))
        }
    }

    private func start(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let (realm, alias) = try await names(context)
        do throws(SignInFailure) {
            let returnTo = BrowserRequests.safeReturnPath(request.uri.queryParameters.get("return"))
            let reauthenticate = request.uri.queryParameters.get("reauth") == "1"
            let started = try await signIn.start(realm: realm, alias: alias, returnTo: returnTo, reauthenticate: reauthenticate)
            return toProvider(started, request)
        } catch {
            return await failurePage(error, context, realm: realm)
        }
    }

    /// Linking adds a way into the account, so it asks what deleting it asks: a form from the account page (CSRF)
    /// and a first factor given within the last minutes (a browser left signed in cannot add the passer-by's
    /// provider account to it).
    private func startLink(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let (realm, alias) = try await names(context)
        guard let (session, userId) = try await browser.signedIn(request, realm: realm) else {
            return renderer.redirect(to: PageURLs.login(realm) + "?return_to=" + PageURLs.account(realm))
        }
        guard let form = try await browser.form(request), BrowserSessionService.csrfMatches(form["csrf"], session) else {
            return renderer.formExpired(realm: realm, backToAccount: true)
        }
        guard session.signedInRecently(now: clock.now()) else {
            return renderer.signInAgain(realm, then: PageURLs.account(realm) + "?notice=link-again")
        }
        do throws(SignInFailure) {
            return toProvider(try await signIn.start(realm: realm, alias: alias, returnTo: PageURLs.account(realm), linkUserId: userId), request)
        } catch {
            return await failurePage(error, context, realm: realm)
        }
    }

    /// The redirect to the provider, with the flow's transaction cookie (and the retirement of old ones).
    private func toProvider(_ started: ProviderSignIn.Start, _ request: Request) -> Response {
        let name = SignInTransaction.cookieName(state: started.transaction.state, secure: browser.secureCookies)
        let value = started.transaction.cookieValue(keys: signIn.keys, cookieName: name)
        let cookie = transactionCookie(name, value: value, maxAge: Int(SignInTransaction.lifetime))
        var headers: HTTPFields = [.location: started.location, .cacheControl: "no-store", .setCookie: cookie]
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        for stale in staleTransactionCookies(request) { headers.append(HTTPField(name: .setCookie, value: expired(stale))) }
        return Response(status: .found, headers: headers)
    }

    private func callback(_ request: Request, _ context: KeywardRequestContext, parameters: [String: String]?) async throws -> Response {
        let (realm, alias) = try await names(context)
        guard let parameters, let state = parameters["state"], (1...512).contains(state.utf8.count) else {
            return await failurePage(SignInFailure(.invalidRequest, "the callback carries no state, or a parameter twice"), context, realm: realm)
        }
        let name = SignInTransaction.cookieName(state: state, secure: browser.secureCookies)
        let clear: HTTPFields = [.setCookie: expired(name)]
        let address = browser.clientAddress(request, context)
        if let seconds = limiter.admit(address, now: clock.now()) {
            var headers = clear
            headers[.retryAfter] = String(seconds)
            return await failurePage(
                SignInFailure(.tooManyAttempts, "too many sign-ins from this address failed lately; try again in \(seconds) seconds"), context,
                realm: realm, headers: headers
            )
        }
        var exchangeRefused = false
        defer { limiter.finish(address, failed: exchangeRefused, now: clock.now()) }
        var linking = false
        guard let value = BrowserRequests.cookie(named: name, in: request) else {
            return await failurePage(
                SignInFailure(.transactionMissing, "this browser has no sign-in waiting for this callback: it expired or was finished already"), context, realm: realm
            )
        }
        do throws(SignInFailure) {
            let transaction = try signIn.transaction(cookie: value, cookieName: name)
            linking = transaction.linkUserId != nil
            let callback = ProviderSignIn.Callback(
                state: state, code: parameters["code"], error: parameters["error"], errorDescription: parameters["error_description"],
                issuer: parameters["iss"], appleUser: parameters["user"]
            )
            if linking {
                let signedInUser = try await signedInUserId(request, realm: realm)
                _ = try await signIn.finishLink(realm: realm, alias: alias, callback: callback, transaction: transaction, signedInUserId: signedInUser)
                return renderer.redirect(to: PageURLs.account(realm) + "?notice=linked", headers: clear)
            }
            let signedIn = try await signIn.finish(realm: realm, alias: alias, callback: callback, transaction: transaction)
            let factor = FirstFactor.provider(alias: alias, credentialEntered: signedIn.credentialEntered)
            let (cookie, next) = try await completeSession(
                signedIn.user, factor: factor, realm: realm, request: request, returnTo: transaction.returnTo, newUser: signedIn.created
            )
            var headers = clear
            headers.append(contentsOf: browser.setCookie(cookie))
            return renderer.redirect(to: next, headers: headers)
        } catch where error.code == .providerError {
            // The person said no at the provider, or the provider could not serve them: back to where they came from.
            let back = linking ? PageURLs.account(realm) + "?notice=link-cancelled" : PageURLs.login(realm) + "?notice=provider-refused"
            return renderer.redirect(to: back, headers: clear)
        } catch {
            exchangeRefused = ProviderCallbackLimiter.counts(error.code)
            return await failurePage(error, context, realm: realm, headers: clear)
        }
    }

    /// The user the browser is signed in as in `realm`, if it is.
    private func signedInUserId(_ request: Request, realm: String) async throws(SignInFailure) -> String? {
        do {
            return try await browser.signedIn(request, realm: realm)?.userId
        } catch {
            throw SignInFailure(.providerUnavailable, "the session cannot be read now; try again", detail: "\(error)")
        }
    }

    private func completeSession(
        _ user: User, factor: FirstFactor, realm: String, request: Request, returnTo: String?, newUser: Bool
    ) async throws(SignInFailure) -> (String, String) {
        do {
            return try await completion.complete(
                user: user, factor: factor, realm: realm, current: try await browser.session(request, realm: realm),
                returnTo: returnTo, clientId: nil, userAgent: request.headers[.userAgent], newUser: newUser
            )
        } catch {
            throw SignInFailure(.providerUnavailable, "the session cannot be stored now; try again")
        }
    }

    /// The transaction cookies a new flow retires: all but the newest `cookiesKept - 1` the browser still has (the new
    /// one makes `cookiesKept`). Without a bound, a page that sends a browser to the start route again and again
    /// piles up cookies until every request of that browser is too large for the proxy in front of Keyward
    /// (security review L1). A cookie that does not open is retired first.
    private func staleTransactionCookies(_ request: Request) -> [String] {
        let held = BrowserRequests.cookies(in: request).filter { SignInTransaction.isCookieName($0.name) }
        guard held.count >= SignInTransaction.cookiesKept else { return [] }
        let newestFirst = held.map { cookie in
            (cookie.name, (try? signIn.transaction(cookie: cookie.value, cookieName: cookie.name))?.startedAt ?? .distantPast)
        }.sorted { $0.1 > $1.1 }
        return newestFirst.dropFirst(SignInTransaction.cookiesKept - 1).map(\.0)
    }

    private func expired(_ name: String) -> String { transactionCookie(name, value: "", maxAge: 0) }

    private func transactionCookie(_ name: String, value: String, maxAge: Int) -> String {
        "\(name)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Lax\(browser.secureCookies ? "; Secure" : "")"
    }

    private func names(_ context: KeywardRequestContext) async throws -> (realm: String, alias: String) {
        (try context.realm.name, context.parameters.get("alias") ?? "")
    }

    /// `realm`: the route's realm once it is known to exist (nil before), so the refusal is audited under it.
    private func failurePage(_ failure: SignInFailure, _ context: KeywardRequestContext, realm: String?, headers: HTTPFields = [:]) async -> Response {
        await signIn.recordRefusal(failure, realm: realm, alias: context.parameters.get("alias"), requestId: context.id)
        return renderer.errorPage(
            heading: "Sign-in failed", text: "\(failure.message) (\(failure.code.rawValue))", status: failure.status,
            realm: context.parameters.get("realm"), requestId: context.id, headers: headers
        )
    }

    /// Each parameter once: a repeated one makes the callback invalid (nil), as with any other form Keyward reads.
    private static func parameters(_ pairs: [(String, String)]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (name, value) in pairs {
            guard parameters.updateValue(value, forKey: name) == nil else { return nil }
        }
        return parameters
    }
}
