// The authorization endpoint's decisions: which requests are accepted, what the person must do next, the code.
import Foundation
import KeywardHTTPInput
import KeywardWire

/// The authorization endpoint's logic (RFC 6749 §4.1, OpenID Connect Core §3.1.2), free of HTTP: a request is
/// checked against its client, then each visit asks what the browser's session still lacks (a sign-in, a fresher
/// one, a consent), and a complete one is answered with a code.
struct AuthorizationService: Sendable {
    let clients: ClientService
    let realms: RealmService
    let codes: SealedJSON
    /// Pushed requests (RFC 9126), sealed into their `request_uri`.
    let pushedRequests: SealedJSON
    let singleUse: any SingleUseStore
    let clock: any KeywardClock
    /// The broker's relay, plugged in once the broker is assembled.
    let relays: RelayAuthorizations

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
        /// Run the second factor on the signed-in session (`acr_values=urn:keyward:acr:mfa` and the session has had
        /// none): the factor says whether the user has one to run.
        case stepUp
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
        // A pushed request carries its own redirect URI and parameters; any others in the URL are not read (RFC 9126 §4).
        if let requestURI = parameters["request_uri"] {
            return (try await pushed(requestURI, realm: realm.name, client: client), client)
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
        if client.requirePAR {
            throw refuse("invalid_request", "client '\(clientId)' must push its authorization requests first (RFC 9126)")
        }
        do throws(AuthorizationRequestError) {
            return (try checked(parameters, client: client), client)
        } catch {
            throw refuse(error.code.rawValue, error.description)
        }
    }

    /// A pushed request (RFC 9126): checked for its client when it was pushed; here it must be this client's,
    /// unexpired and not used before. A refusal is a page: the redirect URI inside cannot be trusted unread.
    private func pushed(_ requestURI: String, realm: String, client: OAuthClient) async throws -> PendingAuthorization {
        guard requestURI.hasPrefix(Self.requestURIPrefix),
            let held = pushedRequests.open(String(requestURI.dropFirst(Self.requestURIPrefix.count)), realm: realm).flatMap(PendingAuthorization.init(json:))
        else { throw Refusal.page("The pushed request (request_uri) is not one this server issued.") }
        guard held.clientId == client.clientId else { throw Refusal.page("The pushed request (request_uri) was made by another app.") }
        let expiresAt = held.createdAt.addingTimeInterval(Self.pushedRequestLifetime)
        guard expiresAt > clock.now() else { throw Refusal.page("The pushed request (request_uri) has expired; the app must push it again.") }
        guard client.redirectURI(matching: held.redirectURI) != nil else {
            throw Refusal.page("The pushed request's redirect URI is no longer registered for the app.")
        }
        guard try await singleUse.recordOnce(scope: "pushed-request:" + realm, key: held.id, expiresAt: expiresAt, now: clock.now()) else {
            throw Refusal.page("The pushed request (request_uri) was used already; the app must push a new one.")
        }
        return held
    }

    /// RFC 9126 §2.2: the URN a pushed request is referred to by.
    static let requestURIPrefix = "urn:ietf:params:oauth:request_uri:"
    /// RFC 9126 §2.2 suggests a short life: long enough for the app to open the browser.
    static let pushedRequestLifetime: TimeInterval = 60

    /// `POST …/ext/par` (RFC 9126 §2): a client's request checked as the authorization endpoint would, then sealed
    /// into the `request_uri` the browser carries (nothing is stored until it is used once).
    func push(_ parameters: [String: String], realm: String, client: OAuthClient) throws(OAuthFailure) -> (requestURI: String, expiresIn: Int) {
        if parameters["request_uri"] != nil { throw OAuthFailure.invalidRequest("request_uri cannot be pushed (RFC 9126 §2.1)") }
        let target = AuthorizationRequest.Target(parameters)
        guard let redirectURI = target.redirectURI, client.redirectURI(matching: redirectURI) != nil else {
            throw OAuthFailure.invalidRequest(
                parameters["redirect_uri"] == nil ? "redirect_uri is missing" : "redirect_uri is not one client '\(client.clientId)' registered"
            )
        }
        do throws(AuthorizationRequestError) {
            let held = try checked(parameters, client: client)
            return (Self.requestURIPrefix + pushedRequests.seal(held.json, realm: realm), Int(Self.pushedRequestLifetime))
        } catch {
            throw OAuthFailure(status: 400, code: ErrorCode(rawValue: error.code.rawValue) ?? .invalidRequest, description: error.description)
        }
    }

    /// The parameters read and checked for `client`, once its redirect URI is known to be one it registered.
    private func checked(_ parameters: [String: String], client: OAuthClient) throws(AuthorizationRequestError) -> PendingAuthorization {
        let request = try AuthorizationRequest(parameters)
        guard request.clientId == client.clientId else { throw AuthorizationRequestError(.invalidRequest, "client_id names another client") }
        return PendingAuthorization(request, scopes: try Self.scopes(request.scopes, client: client), now: clock.now())
    }

    /// The requested scopes within what the client may ask for (its registered scopes, and `openid`); none
    /// requested: the client's.
    private static func scopes(_ requested: [String], client: OAuthClient) throws(AuthorizationRequestError) -> [String] {
        let registered = client.scope.split(separator: " ").map(String.init)
        guard !requested.isEmpty else { return registered }
        let allowed = Set(registered).union(["openid"])
        if let refused = requested.first(where: { !allowed.contains($0) }) {
            throw AuthorizationRequestError(.invalidScope, "scope '\(refused.prefix(64))' is not registered for this app")
        }
        return requested
    }

    /// What `session` (the browser's in this realm, if any) still lacks for `pending`.
    func next(_ pending: PendingAuthorization, client: OAuthClient, session: BrowserSession?) -> Step {
        let now = clock.now()
        guard let session, session.stage == .authenticated, session.userId != nil else {
            return pending.isSilent ? .refuse(code: "login_required", description: "no one is signed in") : .signIn(reauthenticate: false)
        }
        // A first factor that proved the person was there (a password; a provider only when it showed a credential was
        // entered): a provider answering from its own session proves nothing, so it satisfies neither prompt=login nor
        // max_age (OpenID Connect Core §3.1.2.1).
        let present = session.authenticatedAt
        let signedInForThis = pending.signInStarted && session.idHash != pending.sessionBeforeSignIn
        var fresh = true
        if pending.prompt == AuthorizationRequest.Prompt.login, !(signedInForThis && (present.map { $0 >= pending.createdAt } ?? false)) {
            fresh = false
        }
        if let maxAge = pending.maxAge, now.timeIntervalSince(present ?? .distantPast) > TimeInterval(maxAge) { fresh = false }
        if !fresh {
            if signedInForThis {
                return .refuse(code: "login_required", description: "the new sign-in could not show that the person was there")
            }
            return pending.isSilent
                ? .refuse(code: "login_required", description: "a fresh sign-in is needed") : .signIn(reauthenticate: true)
        }
        if pending.wantsMultiFactor, AuthenticationLevel.of(amr: session.amr) != AuthenticationLevel.multiFactor, !pending.stepUpStarted {
            return pending.isSilent ? .refuse(code: "interaction_required", description: "a second factor is needed") : .stepUp
        }
        if let relay = pending.relay.flatMap({ _ in relays.relay }) {
            if relay.skipsConsent(pending, client: client) { return .complete }
        } else if client.firstParty {
            return .complete
        }
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

    /// RFC 6749 §4.1.2.1: `error_description` is printable ASCII without '"' or '\\'; anything else becomes '.
    static func errorDescription(_ description: String) -> String {
        String(description.unicodeScalars.map { (0x20...0x7E).contains($0.value) && $0 != "\"" && $0 != "\\" ? Character($0) : "'" })
    }

    /// An error for the app at its redirect URI (RFC 6749 §4.1.2.1), with `state` and `iss`.
    func refusalURI(realm: String, redirectURI: String, state: String?, code: String, description: String) -> String {
        var parameters = [("error", code), ("error_description", Self.errorDescription(description))]
        if let state { parameters.append(("state", state)) }
        parameters.append(("iss", realms.issuer(of: realm)))
        return FormBody.appending(parameters, to: redirectURI)
    }
}
