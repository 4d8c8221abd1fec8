// The browser session as JSON for single-page apps: who is signed in, and logout with the CSRF token.
import Foundation
import HTTPTypes
import Hummingbird

/// The browser session as JSON, for single-page apps on the realm's origin (the ADR's `/auth/session`):
/// `GET /realms/{realm}/v1/auth/session` answers who is signed in, and how, with the session's CSRF token;
/// `POST /realms/{realm}/v1/auth/logout` ends the session, given that token in `X-CSRF-Token`.
struct SessionRoutes: Sendable {
    let browser: BrowserRequests
    let realms: RealmService
    let users: UserService

    static let csrfHeader = HTTPField.Name("X-CSRF-Token")!

    struct SessionBody: Encodable {
        struct UserBody: Encodable {
            let id: String
            let username: String
        }

        let user: UserBody
        /// How the user signed in (RFC 8176): `pwd` or `fed`, then `mfa`.
        let amr: [String]
        let createdAt: String
        let expiresAt: String
        /// Send it back as `X-CSRF-Token` on state-changing requests (logout).
        let csrfToken: String

        enum CodingKeys: String, CodingKey {
            case user, amr, createdAt = "created_at", expiresAt = "expires_at", csrfToken = "csrf_token"
        }
    }

    func register(on router: Router<KeywardRequestContext>) {
        let api = router.group("/realms/:realm/v1/auth").add(middleware: RealmResolution(realms: realms))
        api.get("session") { request, context in
            let realm = try context.realm.name
            guard let session = try await browser.session(request, realm: realm), session.stage == .authenticated, let userId = session.userId,
                let user = try await users.user(realm: realm, id: userId)
            else { throw APIError(.unauthorized, .notSignedIn, "this browser is not signed in to realm '\(realm)'") }
            return JSONResponse.make(SessionBody(
                user: .init(id: user.id, username: user.username), amr: session.amr, createdAt: session.createdAt.formatted(.iso8601),
                expiresAt: session.expiresAt.formatted(.iso8601), csrfToken: session.csrfToken
            ), headers: [.cacheControl: "no-store"])
        }
        api.post("logout") { request, context in
            let realm = try context.realm.name
            guard let session = try await browser.session(request, realm: realm) else {
                throw APIError(.unauthorized, .notSignedIn, "this browser is not signed in to realm '\(realm)'")
            }
            guard BrowserSessionService.csrfMatches(request.headers[Self.csrfHeader], session) else {
                throw APIError(.forbidden, .csrfMismatch, "send the session's csrf_token (GET …/v1/auth/session) as X-CSRF-Token")
            }
            try await browser.sessions.end(session)
            var headers = browser.clearCookie
            headers[.cacheControl] = "no-store"
            return Response(status: .noContent, headers: headers)
        }
    }

}
