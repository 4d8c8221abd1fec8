// The authorization endpoint's pages: the request, the return from the sign-in, the consent.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardHTTPInput

/// `GET /realms/{realm}/protocol/openid-connect/auth` and its two continuations: `…/auth/resume` (where the sign-in
/// returns) and `POST …/auth/consent`. Thin: each reads the browser's session and pending request and does what
/// `AuthorizationService` says.
struct AuthorizationPages: Sendable {
    let service: AuthorizationService
    let pending: PendingAuthorizations
    let browser: BrowserRequests
    let users: UserService
    let secondFactor: any SecondFactor
    let renderer: PageRenderer

    func register(on pages: RouterGroup<KeywardRequestContext>) {
        pages.get("/realms/:realm/protocol/openid-connect/auth") { request, context in try await authorize(request, context) }
        pages.get("/realms/:realm/protocol/openid-connect/auth/resume") { request, context in try await resume(request, context) }
        pages.post("/realms/:realm/protocol/openid-connect/auth/consent") { request, context in try await consent(request, context) }
        pages.post("/realms/:realm/protocol/openid-connect/auth/step-up") { request, context in try await confirmStepUp(request, context) }
        pages.get("/realms/:realm/auth/relay") { request, context in try await relay(request, context) }
    }

    /// The broker's relay (`RelayAuthorization`): its own parameters, then the same pages as any request.
    private func relay(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm
        guard let relay = service.relays.relay else { return refusalPage(realm.name, "This server does not relay sign-ins to apps.") }
        return try await begin(request, realm: realm) { parameters in try await relay.accept(realm: realm, parameters: parameters) }
    }

    private func authorize(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm
        return try await begin(request, realm: realm) { parameters in try await service.accept(realm: realm, parameters: parameters) }
    }

    /// A new request from the query: read, accepted (or refused as a page or a redirect), then on.
    private func begin(
        _ request: Request, realm: Realm, accept: ([String: String]) async throws -> (PendingAuthorization, OAuthClient)
    ) async throws -> Response {
        let parameters: [String: String]
        do throws(FormBody.Failure) {
            parameters = try FormBody.parse(Array((request.uri.query ?? "").utf8))
        } catch .duplicate(let name) {
            return refusalPage(realm.name, "The parameter '\(name.prefix(64))' appears more than once in the request.")
        } catch {
            return refusalPage(realm.name, "The request's query is not well formed.")
        }
        let accepted: (PendingAuthorization, OAuthClient)
        do {
            accepted = try await accept(parameters)
        } catch let refusal as AuthorizationService.Refusal {
            switch refusal {
            case .page(let text): return refusalPage(realm.name, text)
            case .redirect(let location): return renderer.redirect(to: location)
            }
        }
        return try await proceed(request, realm: realm.name, accepted.0, client: accepted.1)
    }

    /// The answer to a complete request: a code, or the relay's hand-off.
    private func completion(_ held: PendingAuthorization, realm: String, session: BrowserSession) async throws -> String {
        guard held.relay != nil else { return service.complete(held, realm: realm, session: session) }
        guard let relay = service.relays.relay else { throw APIError(.notFound, .notFound, "this server does not relay sign-ins to apps") }
        return try await relay.complete(held, realm: realm, session: session)
    }

    /// An error for the app: at its redirect URI with `state` and `iss`, or at the relay's return address.
    private func refusal(_ held: PendingAuthorization, realm: String, code: String, description: String) -> String {
        if held.relay != nil, let relay = service.relays.relay { return relay.refusal(held, code: code, description: description) }
        return service.refusalURI(realm: realm, redirectURI: held.redirectURI, state: held.state, code: code, description: description)
    }

    /// Back from the sign-in (or a reload): the request from its cookie, and on.
    private func resume(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        guard let id = request.uri.queryParameters.get("id"), let held = pending.read(request, realm: realm, id: id) else {
            return expiredPage(realm)
        }
        guard let client = try await registeredClient(of: held, realm: realm) else { return unregistered(realm, held) }
        return try await proceed(request, realm: realm, held, client: client)
    }

    /// What a page of a pending request posts: its fields, the request, the signed-in session it was shown to (the
    /// session's CSRF token checked) and the client, still registered; or the answer to give instead.
    private enum Posted {
        case ready(form: [String: String], held: PendingAuthorization, session: BrowserSession, client: OAuthClient)
        case answer(Response)
    }

    private func posted(_ request: Request, realm: String) async throws -> Posted {
        guard let form = try await browser.form(request), let id = form["id"], let held = pending.read(request, realm: realm, id: id) else {
            return .answer(expiredPage(realm))
        }
        guard let session = try await browser.session(request, realm: realm), session.stage == .authenticated else {
            return .answer(renderer.redirect(to: PendingAuthorizations.resumePath(realm: realm, id: id)))
        }
        guard BrowserSessionService.csrfMatches(form["csrf"], session) else { return .answer(renderer.formExpired(realm: realm, backToAccount: false)) }
        guard let client = try await registeredClient(of: held, realm: realm) else { return .answer(unregistered(realm, held)) }
        return .ready(form: form, held: held, session: session, client: client)
    }

    /// The request's client, when it is still registered with the request's redirect URI (it may have been deleted or
    /// changed while the person signed in).
    private func registeredClient(of held: PendingAuthorization, realm: String) async throws -> OAuthClient? {
        guard let client = try await service.clients.client(realm: realm, clientId: held.clientId), client.redirectURI(matching: held.redirectURI) != nil
        else { return nil }
        return client
    }

    private func unregistered(_ realm: String, _ held: PendingAuthorization) -> Response {
        refusalPage(realm, "The app that asked to sign you in is no longer registered.", headers: pending.clear(realm: realm, id: held.id))
    }

    private func consent(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        let (form, held, session, client): ([String: String], PendingAuthorization, BrowserSession, OAuthClient)
        switch try await posted(request, realm: realm) {
        case .ready(let readyForm, let readyHeld, let readySession, let readyClient): (form, held, session, client) = (readyForm, readyHeld, readySession, readyClient)
        case .answer(let response): return response
        }
        let id = held.id
        // The request may still ask for something first (a fresh sign-in, a second factor): the answer waits for it.
        switch service.next(held, client: client, session: session) {
        case .consent, .complete: break
        case .signIn, .stepUp, .refuse: return renderer.redirect(to: PendingAuthorizations.resumePath(realm: realm, id: id))
        }
        let cleared = pending.clear(realm: realm, id: id)
        guard form["decision"] == "allow" else {
            let location = refusal(held, realm: realm, code: "access_denied", description: "the person did not allow the app")
            return renderer.redirect(to: location, headers: cleared)
        }
        return renderer.redirect(to: try await completion(held, realm: realm, session: session), headers: cleared)
    }

    private func proceed(_ request: Request, realm: String, _ held: PendingAuthorization, client: OAuthClient) async throws -> Response {
        var held = held
        let session = try await browser.session(request, realm: realm)
        switch service.next(held, client: client, session: session) {
        case .complete:
            return renderer.redirect(to: try await completion(held, realm: realm, session: session!), headers: pending.clear(realm: realm, id: held.id))
        case .refuse(let code, let description):
            let location = refusal(held, realm: realm, code: code, description: description)
            return renderer.redirect(to: location, headers: pending.clear(realm: realm, id: held.id))
        case .signIn(let reauthenticate):
            held.signInStarted = true
            held.sessionBeforeSignIn = session?.idHash ?? ""
            guard let kept = pending.keep(held, realm: realm, request: request) else { return tooLarge(realm, held) }
            return renderer.redirect(to: signInURL(realm: realm, held, reauthenticate: reauthenticate), headers: kept)
        case .consent:
            return try await consentPage(request, realm: realm, held, session: session!)
        case .stepUp:
            // A user with no second factor to run goes on without one: `acr` will say what happened.
            guard let userId = session?.userId, case .verify = try await secondFactor.step(realm: realm, userId: userId, newUser: false) else {
                held.stepUpStarted = true
                return try await proceed(request, realm: realm, held, client: client)
            }
            return try await stepUpPage(request, realm: realm, held, session: session!)
        }
    }

    /// The second factor runs only once the person asks for it here: a link on another site must not be able to
    /// change a signed-in session or send a push.
    private func stepUpPage(_ request: Request, realm: String, _ held: PendingAuthorization, session: BrowserSession) async throws -> Response {
        guard let kept = pending.keep(held, realm: realm, request: request) else { return tooLarge(realm, held) }
        let context: [String: Any] = [
            "clientId": held.clientId, "csrf": session.csrfToken, "id": held.id, "action": "/realms/\(realm)/protocol/openid-connect/auth/step-up",
        ]
        return renderer.page(
            "step-up", title: "Confirm with your second factor", realm: realm, context: context, headers: kept,
            formTargets: PendingAuthorizations.formTargets(held)
        )
    }

    private func confirmStepUp(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        let (form, held, session, client): ([String: String], PendingAuthorization, BrowserSession, OAuthClient)
        switch try await posted(request, realm: realm) {
        case .ready(let readyForm, let readyHeld, let readySession, let readyClient): (form, held, session, client) = (readyForm, readyHeld, readySession, readyClient)
        case .answer(let response): return response
        }
        let id = held.id
        guard form["decision"] != "cancel" else {
            let location = refusal(held, realm: realm, code: "access_denied", description: "the person did not confirm")
            return renderer.redirect(to: location, headers: pending.clear(realm: realm, id: id))
        }
        guard service.next(held, client: client, session: session) == .stepUp else {
            return renderer.redirect(to: PendingAuthorizations.resumePath(realm: realm, id: id))
        }
        return try await stepUp(request, realm: realm, held, client: client, session: session)
    }

    /// The session goes through its second factor's step and comes back here; a user with no second factor to run
    /// goes on without one (`acr_values` is a request, and `acr` will say what happened: OpenID Connect Core
    /// §3.1.2.1).
    private func stepUp(_ request: Request, realm: String, _ held: PendingAuthorization, client: OAuthClient, session: BrowserSession) async throws -> Response {
        var held = held
        held.stepUpStarted = true
        guard let userId = session.userId, case .verify(let next) = try await secondFactor.step(realm: realm, userId: userId, newUser: false) else {
            return try await proceed(request, realm: realm, held, client: client)
        }
        var stepping = session
        stepping.stage = .passwordVerified
        stepping.returnTo = PendingAuthorizations.resumePath(realm: realm, id: held.id)
        stepping.clientId = held.clientId
        stepping.clearSecondFactorState()
        guard let kept = pending.keep(held, realm: realm, request: request) else { return tooLarge(realm, held) }
        try await browser.sessions.save(stepping)
        return renderer.redirect(to: next, headers: kept)
    }

    /// The sign-in page, or the identity provider the request named, returning to `…/auth/resume`.
    private func signInURL(realm: String, _ held: PendingAuthorization, reauthenticate: Bool) -> String {
        let resume = PendingAuthorizations.resumePath(realm: realm, id: held.id)
        if let alias = held.identityProviderHint {
            return FormBody.appending([("return", resume)] + (reauthenticate ? [("reauth", "1")] : []), to: PageURLs.providerSignIn(realm, alias: alias))
        }
        var parameters = [("return_to", resume), ("client_id", held.clientId)]
        if reauthenticate { parameters.append(("reauth", "1")) }
        if let hint = held.loginHint { parameters.append(("login_hint", hint)) }
        return FormBody.appending(parameters, to: PageURLs.login(realm))
    }

    private func consentPage(_ request: Request, realm: String, _ held: PendingAuthorization, session: BrowserSession) async throws -> Response {
        guard let kept = pending.keep(held, realm: realm, request: request) else { return tooLarge(realm, held) }
        let username = try await session.userId.asyncMap { try await users.user(realm: realm, id: $0)?.username } ?? nil
        let context: [String: Any] = [
            "clientId": held.clientId, "username": username ?? "", "realmName": realm, "csrf": session.csrfToken, "id": held.id,
            "action": "/realms/\(realm)/protocol/openid-connect/auth/consent", "destination": held.redirectURI,
            "scopes": try await consentItems(held, realm: realm), "hasScopes": held.relay != nil || !held.scopes.isEmpty,
        ]
        return renderer.page(
            "consent", title: "Allow \(held.clientId)?", realm: realm, context: context, headers: kept,
            formTargets: PendingAuthorizations.formTargets(held)
        )
    }

    /// A request too large for the browser to hold while the person signs in: back to the app.
    private func tooLarge(_ realm: String, _ held: PendingAuthorization) -> Response {
        renderer.redirect(to: refusal(
            held, realm: realm, code: "invalid_request",
            description: "the request is too large to hold during the sign-in: shorten state, nonce, login_hint or the redirect URI"
        ))
    }

    /// What the consent page lists: the scopes in words, or what the relay's app will be able to do.
    private func consentItems(_ held: PendingAuthorization, realm: String) async throws -> [[String: String]] {
        if held.relay != nil, let relay = service.relays.relay { return [["text": relay.consentText(held)]] }
        return held.scopes.map { ["text": Self.describe(scope: $0)] }
    }

    /// What a scope lets the app do, in words.
    static func describe(scope: String) -> String {
        switch scope {
        case "openid": "Know who you are: your account's identifier in this realm"
        case "profile": "See your profile: your username"
        case "email": "See your email address"
        case "offline_access": "Stay signed in when you are not using it"
        default: "Use the permission '\(scope)'"
        }
    }

    private func refusalPage(_ realm: String, _ text: String, headers: HTTPFields = [:]) -> Response {
        renderer.page("message", title: "Sign-in request refused", realm: realm, context: [
            "heading": "This sign-in request cannot be completed", "text": text, "isError": true,
        ], status: .badRequest, headers: headers)
    }

    private func expiredPage(_ realm: String) -> Response {
        renderer.page("message", title: "Sign-in request expired", realm: realm, context: [
            "heading": "This sign-in request has expired",
            "text": "Too much time passed, or it was completed already. Go back to the app and start signing in again.", "isError": true,
        ], status: .badRequest)
    }
}
