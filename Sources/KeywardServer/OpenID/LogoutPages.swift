// RP-initiated logout: an app signs the person out of the realm and may be sent back to a registered page.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardHTTPInput
import KeywardJOSE

/// `GET|POST /realms/{realm}/protocol/openid-connect/logout` (OpenID Connect RP-Initiated Logout 1.0): ends the
/// browser's session in the realm, and the app sessions that came from it. With an `id_token_hint` this realm
/// issued to the signed-in person, at once; otherwise the person confirms on a page first, so a link on another
/// site cannot sign anyone out. A `post_logout_redirect_uri` is followed only when the app (named by the hint or
/// `client_id`) registered it byte for byte; anything else is a page, never a redirect.
struct LogoutPages: Sendable {
    let clients: ClientService
    let realms: RealmService
    let keys: RealmKeyService
    let browser: BrowserRequests
    /// The app sessions an id_token names (`sid`), to tell whether it came from this browser's session.
    let refresh: RefreshTokens
    let renderer: PageRenderer
    let clock: any KeywardClock

    /// An id_token_hint may have expired long ago (RP-Initiated Logout §2): only its signature and issuer count.
    static let hintAge: TimeInterval = 365 * 86400

    func register(on pages: RouterGroup<KeywardRequestContext>) {
        pages.get("/realms/:realm/protocol/openid-connect/logout") { request, context in try await logout(request, context, form: nil) }
        pages.post("/realms/:realm/protocol/openid-connect/logout") { request, context in
            try await logout(request, context, form: try await browser.form(request) ?? [:])
        }
    }

    private struct Refused: Error { let text: String }

    /// What the request asks, checked: whose session the hint names, and where to go afterwards.
    private struct Asked: Sendable {
        var subject: String?
        /// The hint's app session (`sid`).
        var appSession: String?
        var clientId: String?
        var returnTo: String?
        var state: String?
    }

    private func logout(_ request: Request, _ context: KeywardRequestContext, form: [String: String]?) async throws -> Response {
        let realm = try context.realm
        let parameters: [String: String]
        if let form {
            parameters = form
        } else {
            do throws(FormBody.Failure) {
                parameters = try FormBody.parse(Array((request.uri.query ?? "").utf8))
            } catch {
                return refusalPage(realm.name, "The sign-out request's parameters are not well formed.")
            }
        }
        let asked: Asked
        do {
            asked = try await checked(parameters, realm: realm)
        } catch let refused as Refused {
            return refusalPage(realm.name, refused.text)
        }
        let session = try await browser.session(request, realm: realm.name)
        if let form, let session {
            guard BrowserSessionService.csrfMatches(form["csrf"], session) else { return renderer.formExpired(realm: realm.name, backToAccount: true) }
            return try await end(session, realm: realm.name, asked)
        }
        guard let session, session.userId != nil else { return finished(realm.name, asked, headers: [:]) }
        if try await hintNamesThisSession(asked, session: session, realm: realm.name) { return try await end(session, realm: realm.name, asked) }
        var page: [String: Any] = [
            "action": "/realms/\(realm.name)/protocol/openid-connect/logout", "csrf": session.csrfToken, "accountURL": PageURLs.account(realm.name),
        ]
        var hidden: [[String: String]] = []
        if let clientId = asked.clientId { hidden.append(["name": "client_id", "value": clientId]) }
        if let returnTo = asked.returnTo { hidden.append(["name": "post_logout_redirect_uri", "value": returnTo]) }
        if let state = asked.state { hidden.append(["name": "state", "value": state]) }
        page["hidden"] = hidden
        return renderer.page("logout-confirm", title: "Sign out?", realm: realm.name, context: page, formTargets: formTargets(asked))
    }

    private func checked(_ parameters: [String: String], realm: Realm) async throws -> Asked {
        var asked = Asked()
        if let hint = parameters["id_token_hint"] {
            let keySet = try await keys.publishedKeys(realm: realm.name)
            let policy = JWTVerificationPolicy(
                allowedAlgorithms: Set(RealmKeyService.supportedAlgorithms), keys: .set(keySet), expectedType: "JWT", requiredClaims: ["sub", "aud"],
                issuer: realms.issuer(of: realm.name), expiryLeeway: Self.hintAge
            )
            // An ID token's shape, not just any token of the realm's with a subject: its app (`azp`) is its audience,
            // and it names its app session (`sid`).
            guard let claims = try? JWTVerifier.verify(hint, policy: policy, now: clock.now()).claims, let audience = claims["aud"]?.stringValue,
                claims["azp"]?.stringValue == audience, let sid = claims["sid"]?.stringValue
            else { throw Refused(text: "The id_token_hint is not an ID token this realm issued.") }
            (asked.subject, asked.clientId, asked.appSession) = (claims["sub"]?.stringValue, audience, sid)
        }
        if let clientId = parameters["client_id"] {
            if let named = asked.clientId, named != clientId { throw Refused(text: "client_id is not the app the id_token_hint was issued to.") }
            asked.clientId = clientId
        }
        if let state = parameters["state"] {
            guard state.utf8.count <= AuthorizationRequest.maxStateLength, state.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                throw Refused(text: "The state parameter is not valid.")
            }
            asked.state = state
        }
        if let returnTo = parameters["post_logout_redirect_uri"] {
            guard let clientId = asked.clientId, let client = try await clients.client(realm: realm.name, clientId: clientId) else {
                throw Refused(text: "post_logout_redirect_uri needs the app it belongs to (id_token_hint or client_id).")
            }
            guard client.postLogoutRedirectURIs.contains(where: { $0.matches(returnTo) }) else {
                throw Refused(text: "The address to return to is not one the app '\(clientId)' registered, so you are not sent there.")
            }
            asked.returnTo = returnTo
        }
        return asked
    }

    /// Whether the hint's app session came from this very browser session, of this person: then the app that asks
    /// is the one this browser signed in to, and no confirmation is needed. A hint from elsewhere (another browser of
    /// the same person, a token that leaked) asks first.
    private func hintNamesThisSession(_ asked: Asked, session: BrowserSession, realm: String) async throws -> Bool {
        guard let subject = asked.subject, subject == session.userId, let appSession = asked.appSession,
            let family = try await refresh.family(realm: realm, id: appSession)
        else { return false }
        return family.userId == subject && family.sessionId == session.lastingId && family.clientId == asked.clientId
    }

    private func end(_ session: BrowserSession, realm: String, _ asked: Asked) async throws -> Response {
        try await browser.sessions.end(session)
        return finished(realm, asked, headers: browser.clearCookie)
    }

    private func finished(_ realm: String, _ asked: Asked, headers: HTTPFields) -> Response {
        guard let returnTo = asked.returnTo else {
            return renderer.redirect(to: PageURLs.login(realm) + "?notice=logged-out", headers: headers)
        }
        return renderer.redirect(to: FormBody.appending(asked.state.map { [("state", $0)] } ?? [], to: returnTo), headers: headers)
    }

    private func formTargets(_ asked: Asked) -> [String] {
        asked.returnTo.flatMap(RedirectURI.formActionSource(of:)).map { [$0] } ?? []
    }

    private func refusalPage(_ realm: String, _ text: String) -> Response {
        renderer.page("message", title: "Sign-out request refused", realm: realm, context: [
            "heading": "This sign-out request cannot be completed", "text": text, "isError": true,
        ], status: .badRequest)
    }
}
