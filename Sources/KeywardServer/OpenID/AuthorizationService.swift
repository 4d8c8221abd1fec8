// The authorization endpoint's decisions: which requests are accepted, what the person must do next, the code.
import Foundation
import KeywardHTTPInput

/// The authorization endpoint's logic (RFC 6749 §4.1, OpenID Connect Core §3.1.2), free of HTTP: a request is
/// checked against its client, then each visit asks what the browser's session still lacks (a sign-in, a fresher
/// one, a consent), and a complete one is answered with a code.
struct AuthorizationService: Sendable {
    let clients: ClientService
    let realms: RealmService
    let codes: SealedJSON
    let clock: any KeywardClock

    /// A refused request, and where the refusal goes.
    enum Refusal: Error, Equatable {
        /// Shown to the person as a page: the client or its redirect URI is not known, so nothing may be sent to it
        /// (RFC 6749 §4.1.2.1).
        case page(String)
        /// Sent back to the app at its redirect URI.
        case redirect(String)
    }

    /// What the browser does next for a pending request.
    enum Step: Equatable {
        /// Sign in (again, when `reauthenticate`: the session is too old or the app asked for a fresh sign-in).
        case signIn(reauthenticate: Bool)
        /// Show the consent page.
        case consent
        /// Issue the code.
        case complete
        /// Answer the app with this error (`login_required`, `consent_required`).
        case refuse(code: String, description: String)
    }

    /// Checks a request's parameters and its client: a refusal before the redirect URI is matched is a page, after
    /// it a redirect (with `state` and `iss`).
    func accept(realm: Realm, parameters: [String: String]) async throws -> (PendingAuthorization, OAuthClient) {
        let target = AuthorizationRequest.Target(parameters)
        guard let clientId = target.clientId else {
            throw Refusal.page(parameters["client_id"] == nil ? "The request names no app (client_id is missing)." : "The request's client_id is not valid.")
        }
        guard let client = try await clients.client(realm: realm.name, clientId: clientId) else {
            throw Refusal.page("No app '\(clientId)' is registered in this realm.")
        }
        guard let redirectURI = target.redirectURI else {
            throw Refusal.page(parameters["redirect_uri"] == nil ? "The request names no redirect URI (redirect_uri is missing)." : "The request's redirect_uri is too long.")
        }
        guard client.redirectURI(matching: redirectURI) != nil else {
            throw Refusal.page("The redirect URI is not one the app '\(clientId)' registered, so the answer cannot be sent to it.")
        }
        func refuse(_ code: String, _ description: String) -> Refusal {
            .redirect(refusalURI(realm: realm.name, redirectURI: redirectURI, state: target.state, code: code, description: description))
        }
        if parameters["request_uri"] != nil {
            throw refuse("invalid_request", "pushed authorization requests (request_uri) are not accepted yet")
        }
        if client.requirePAR {
            throw refuse("invalid_request", "client '\(clientId)' must push its authorization requests first (RFC 9126)")
        }
        let request: AuthorizationRequest
        do throws(AuthorizationRequestError) {
            request = try AuthorizationRequest(parameters)
        } catch {
            throw refuse(error.code.rawValue, error.description)
        }
        let scopes = try Self.scopes(request.scopes, client: client) { refuse("invalid_scope", $0) }
        return (PendingAuthorization(request, scopes: scopes, now: clock.now()), client)
    }

    /// The requested scopes within what the client may ask for (its registered scopes, and `openid`); none
    /// requested: the client's.
    private static func scopes(_ requested: [String], client: OAuthClient, refuse: (String) -> Refusal) throws -> [String] {
        let registered = client.scope.split(separator: " ").map(String.init)
        guard !requested.isEmpty else { return registered }
        let allowed = Set(registered).union(["openid"])
        if let refused = requested.first(where: { !allowed.contains($0) }) {
            throw refuse("scope '\(refused.prefix(64))' is not registered for this app")
        }
        return requested
    }

    /// What `session` (the browser's in this realm, if any) still lacks for `pending`.
    func next(_ pending: PendingAuthorization, client: OAuthClient, session: BrowserSession?) -> Step {
        let now = clock.now()
        guard let session, session.stage == .authenticated, session.userId != nil else {
            return pending.isSilent ? .refuse(code: "login_required", description: "no one is signed in") : .signIn(reauthenticate: false)
        }
        let signedIn = session.signInTime
        let signedInForThis = pending.signInStarted && signedIn >= pending.createdAt
        var fresh = true
        if pending.prompt == AuthorizationRequest.Prompt.login, signedIn < pending.createdAt { fresh = false }
        if let maxAge = pending.maxAge, now.timeIntervalSince(signedIn) > TimeInterval(maxAge) { fresh = false }
        if !fresh, !signedInForThis {
            return pending.isSilent
                ? .refuse(code: "login_required", description: "the sign-in is older than max_age allows") : .signIn(reauthenticate: true)
        }
        if client.firstParty { return .complete }
        return pending.isSilent ? .refuse(code: "consent_required", description: "the app needs the person's consent") : .consent
    }

    /// The code for a complete request, at the app's redirect URI with `state` and `iss` (RFC 9207).
    func complete(_ pending: PendingAuthorization, realm: String, session: BrowserSession) -> String {
        let now = clock.now()
        let code = AuthorizationCode(
            clientId: pending.clientId, redirectURI: pending.redirectURI, userId: session.userId ?? "", sessionId: session.lastingId,
            scope: pending.scopes.joined(separator: " "), nonce: pending.nonce, codeChallenge: pending.codeChallenge, dpopJKT: pending.dpopJKT,
            authTime: session.signInTime, amr: session.amr, acr: AuthenticationLevel.of(amr: session.amr),
            expiresAt: now.addingTimeInterval(AuthorizationCode.lifetime)
        )
        var parameters = [("code", codes.seal(code.json, realm: realm))]
        if let state = pending.state { parameters.append(("state", state)) }
        parameters.append(("iss", realms.issuer(of: realm)))
        return FormBody.appending(parameters, to: pending.redirectURI)
    }

    /// An error for the app at its redirect URI (RFC 6749 §4.1.2.1), with `state` and `iss`.
    func refusalURI(realm: String, redirectURI: String, state: String?, code: String, description: String) -> String {
        // RFC 6749 §4.1.2.1: error_description is printable ASCII without '"' or '\\'.
        let text = String(description.unicodeScalars.map { (0x20...0x7E).contains($0.value) && $0 != "\"" && $0 != "\\" ? Character($0) : "'" })
        var parameters = [("error", code), ("error_description", text)]
        if let state { parameters.append(("state", state)) }
        parameters.append(("iss", realms.issuer(of: realm)))
        return FormBody.appending(parameters, to: redirectURI)
    }
}
