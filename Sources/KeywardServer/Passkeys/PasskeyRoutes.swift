// The passkey JSON endpoints (WebAuthn Level 3 JSON forms), for the pages' script and for native apps.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardJOSE
import KeywardWire

/// `POST /realms/{realm}/webauthn/registration/options` and `…/registration` (a signed-in browser session, its CSRF
/// token in `X-CSRF-Token`, a sign-in within `BrowserSession.recentSignIn`), and `…/authentication/options` and
/// `…/authentication` (the sign-in page's pre-login state, or a session on its way in). Thin: the browser's state
/// read here, the ceremony in `PasskeyService`, the sign-in finished by Accounts' `SignInCompletion`.
struct PasskeyRoutes: Sendable {
    let service: PasskeyService
    let browser: BrowserRequests
    let signIn: SignInCompletion
    let secondFactor: any SecondFactor
    let realmResolution: RealmResolution
    let clock: any KeywardClock

    static let csrfHeader = HTTPField.Name("X-CSRF-Token")!
    /// A registration with an attestation chain of a few certificates fits well within this.
    static let maxBodySize = 64 * 1024

    func register(on router: Router<KeywardRequestContext>) {
        let api = router.group("/realms/:realm/webauthn").add(middleware: realmResolution)
        api.post("registration/options") { request, context in try await registrationOptions(request, context) }
        api.post("registration") { request, context in try await registration(request, context) }
        api.post("authentication/options") { request, context in try await authenticationOptions(request, context) }
        api.post("authentication") { request, context in try await authentication(request, context) }
    }

    // MARK: Registration

    /// The signed-in session, its CSRF token matched and its sign-in recent.
    private func registeringSession(_ request: Request, realm: String) async throws -> (BrowserSession, String) {
        guard let (session, userId) = try await browser.signedIn(request, realm: realm) else {
            throw APIError(.unauthorized, .notSignedIn, "sign in to realm '\(realm)' before adding a passkey")
        }
        guard BrowserSessionService.csrfMatches(request.headers[Self.csrfHeader], session) else {
            throw APIError(.forbidden, .csrfMismatch, "send the session's csrf_token as X-CSRF-Token")
        }
        guard session.signedInRecently(now: clock.now()) else {
            throw APIError(.forbidden, .recentSignInRequired, "adding a passkey needs a sign-in within the last \(Int(BrowserSession.recentSignIn / 60)) minutes")
        }
        return (session, userId)
    }

    private func registrationOptions(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        let (session, userId) = try await registeringSession(request, realm: realm)
        let user = try await existingUser(realm: realm, id: userId)
        let options = try await refusing { try await service.registrationOptions(realm: realm, user: user, binding: Self.binding(session)) }
        return JSONResponse.make(options, headers: [.cacheControl: "no-store"])
    }

    /// `RegistrationResponseJSON` and, beside its members, the name to give the passkey (ignored when not a string).
    private struct NamedRegistration: Decodable {
        let response: RegistrationResponseJSON
        let name: String?

        private enum Key: CodingKey { case name }

        init(from decoder: any Decoder) throws {
            response = try RegistrationResponseJSON(from: decoder)
            name = (try? decoder.container(keyedBy: Key.self).decodeIfPresent(String.self, forKey: .name)) ?? nil
        }
    }

    private func registration(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        let (session, userId) = try await registeringSession(request, realm: realm)
        let registration = try await JSONRequestBody.decode(NamedRegistration.self, request, maxSize: Self.maxBodySize)
        let user = try await existingUser(realm: realm, id: userId)
        let passkey = try await refusing {
            try await service.register(
                realm: realm, user: user, binding: Self.binding(session), response: registration.response, name: registration.name
            )
        }
        return JSONResponse.make(
            RegisteredPasskey(id: passkey.credentialId, name: passkey.name, synced: passkey.backupEligible, attestation: passkey.attestationFormat),
            status: .created, headers: [.cacheControl: "no-store"]
        )
    }

    // MARK: Sign-in

    /// What the browser holds on its way in, and the ceremony that fits it: a session between the first factor and
    /// the second takes the second step; anything else (a pre-login state, a session signing in again) signs in.
    private enum Holder {
        case session(BrowserSession)
        case preLogin(PreLoginState)
    }

    private func holder(_ request: Request, realm: String) async throws -> Holder {
        if let session = try await browser.session(request, realm: realm) {
            guard BrowserSessionService.csrfMatches(request.headers[Self.csrfHeader], session) else {
                throw APIError(.forbidden, .csrfMismatch, "send the sign-in page's csrf token as X-CSRF-Token")
            }
            return .session(session)
        }
        if let state = browser.preLogin(request, realm: realm) {
            guard browser.sessions.csrfMatches(request.headers[Self.csrfHeader], state) else {
                throw APIError(.forbidden, .csrfMismatch, "send the sign-in page's csrf token as X-CSRF-Token")
            }
            return .preLogin(state)
        }
        throw APIError(.unauthorized, .notSignedIn, "open the sign-in page of realm '\(realm)' first: its cookie carries the sign-in's state")
    }

    private struct OptionsRequest: Decodable {
        let username: String?
    }

    private func authenticationOptions(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        // A caller holding nothing yet (a native app, before any page) gets a pre-login state of its own with the
        // options: its cookie, and the CSRF token the answer must carry. Holding nothing, it had nothing to forge.
        var fresh: HTTPFields = [:]
        let holder: Holder
        if browser.cookieValue(request) == nil {
            let (cookie, state) = browser.sessions.startPreLogin(realm: realm, returnTo: nil, clientId: nil)
            fresh = browser.setCookie(cookie)
            fresh[Self.csrfHeader] = browser.sessions.csrfToken(for: state)
            holder = .preLogin(state)
        } else {
            holder = try await self.holder(request, realm: realm)
        }
        let asked = try await JSONRequestBody.decode(OptionsRequest.self, request, maxSize: 4096)
        let username = asked.username.map { String($0.prefix(128)) }
        let options = try await refusing {
            switch holder {
            case .session(let session) where PasskeySecondFactor.isOpen(for: session):
                try await service.authenticationOptions(
                    realm: realm, binding: Self.binding(session), ceremony: .secondFactor, userId: session.userId, username: nil
                )
            case .session(let session):
                try await service.authenticationOptions(realm: realm, binding: Self.binding(session), ceremony: .signIn, userId: nil, username: username)
            case .preLogin(let state):
                try await service.authenticationOptions(realm: realm, binding: Self.binding(state), ceremony: .signIn, userId: nil, username: username)
            }
        }
        fresh[.cacheControl] = "no-store"
        return JSONResponse.make(options, headers: fresh)
    }

    private func authentication(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        let holder = try await holder(request, realm: realm)
        let response = try await JSONRequestBody.decode(AuthenticationResponseJSON.self, request, maxSize: Self.maxBodySize)
        switch holder {
        case .session(var session) where PasskeySecondFactor.isOpen(for: session):
            let signedIn = try await refusing {
                try await service.authenticate(realm: realm, binding: Self.binding(session), ceremony: .secondFactor, response: response)
            }
            guard signedIn.user.id == session.userId else {
                throw APIError(.badRequest, .passkeyRefused, "the passkey belongs to another account", reason: PasskeyRefusal.userHandleMismatch)
            }
            await secondFactor.abandon(session)
            session.clearSecondFactorState()
            LoginFlow.secondFactorVerified(&session, amr: PasskeySecondFactor.amr)
            if signedIn.userVerified { LoginFlow.secondFactorVerified(&session, amr: "user") }
            try await browser.sessions.save(session)
            return Self.signedIn(next: session.returnTo ?? PageURLs.account(realm), amr: session.amr, headers: [:])
        case .session(let session):
            let signedIn = try await refusing {
                try await service.authenticate(realm: realm, binding: Self.binding(session), ceremony: .signIn, response: response)
            }
            let (cookie, next) = try await signIn.complete(
                user: signedIn.user, factor: signedIn.firstFactor, realm: realm, current: session, returnTo: session.returnTo,
                clientId: session.clientId, userAgent: request.headers[.userAgent]
            )
            return Self.signedIn(next: next, amr: signedIn.firstFactor.amr, headers: browser.setCookie(cookie))
        case .preLogin(let state):
            let signedIn = try await refusing {
                try await service.authenticate(realm: realm, binding: Self.binding(state), ceremony: .signIn, response: response)
            }
            let (cookie, next) = try await signIn.complete(
                user: signedIn.user, factor: signedIn.firstFactor, realm: realm, current: nil, returnTo: state.returnTo,
                clientId: state.clientId, userAgent: request.headers[.userAgent]
            )
            return Self.signedIn(next: next, amr: signedIn.firstFactor.amr, headers: browser.setCookie(cookie))
        }
    }

    private static func signedIn(next: String, amr: [String], headers: HTTPFields) -> Response {
        var fields = headers
        fields[.cacheControl] = "no-store"
        return JSONResponse.make(PasskeySignInResponse(next: next, amr: amr), headers: fields)
    }

    // MARK: Pieces

    static func binding(_ session: BrowserSession) -> String { "s:" + session.idHash }
    static func binding(_ state: PreLoginState) -> String { "p:" + state.nonce }

    private func existingUser(realm: String, id: String) async throws -> User {
        guard let user = try await service.users.user(realm: realm, id: id), user.enabled else {
            throw APIError(.unauthorized, .notSignedIn, "the signed-in account is gone or disabled")
        }
        return user
    }

    /// The service's refusals as the API's errors: `passkeys_disabled`, or `passkey_refused` with the check's reason.
    private func refusing<Value>(_ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch let refusal as PasskeyRefusal {
            throw APIError(.badRequest, .passkeyRefused, refusal.detail, reason: refusal.reason)
        } catch let disabled as PasskeysDisabled {
            throw APIError(.forbidden, .passkeysDisabled, "realm '\(disabled.realm)' does not offer passkeys")
        }
    }
}
