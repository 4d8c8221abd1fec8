// What an app does with its sign-in: ask who is signed in (userinfo) and end it (revocation).
import Foundation
import HTTPTypes
import Hummingbird
import KeywardJOSE
import KeywardWire

/// `GET|POST …/openid-connect/userinfo` (OpenID Connect Core §5.3) and `POST …/openid-connect/revoke` (RFC 7009).
/// Thin: the gate in front proves the userinfo caller; the app sessions (`RefreshTokens`) answer both.
struct AppSessionRoutes: Sendable {
    let refresh: RefreshTokens
    let users: UserService
    let accessTokens: AccessTokenIssuer
    let clients: ClientAuthentication
    let realmResolution: RealmResolution
    let authentication: DPoPAuthentication
    let clock: any KeywardClock
    let maxBodySize: Int

    func register(on router: Router<KeywardRequestContext>) {
        let userinfo = router.group("/realms/:realm/protocol/openid-connect/userinfo").add(middleware: realmResolution).add(middleware: authentication)
        userinfo.get { _, context in try await userInfo(context) }
        userinfo.post { _, context in try await userInfo(context) }
        router.group("/realms/:realm/protocol/openid-connect/revoke").add(middleware: OAuthErrorBodies()).add(middleware: realmResolution)
            .post { request, context in try await revoke(request, context) }
    }

    /// The signed-in person's claims, for a token of an app session that is still live (a revoked one is refused
    /// at once, before its access token expires).
    private func userInfo(_ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        let caller = try context.caller(DPoPResourceGuard.Caller.self)
        let scopes = Set((caller.claims["scope"]?.stringValue ?? "").split(separator: " "))
        guard scopes.contains("openid"), let sessionId = caller.claims["sid"]?.stringValue else {
            throw OAuthFailure(
                status: 403, code: .insufficientScope, description: "the access token was not issued for OpenID Connect (scope openid)",
                challenge: "DPoP error=\"insufficient_scope\", scope=\"openid\""
            )
        }
        guard let family = try await refresh.family(realm: realm, id: sessionId), family.isLive(now: clock.now()), family.userId == caller.subject,
            let user = try await users.user(realm: realm, id: caller.subject), user.enabled
        else {
            throw OAuthFailure(status: 401, code: .invalidToken, description: "the sign-in this token belongs to has ended", challenge: "DPoP error=\"invalid_token\"")
        }
        var claims: JSONObject = ["sub": .string(user.id)]
        if scopes.contains("profile") { claims["preferred_username"] = .string(user.username) }
        return JSONResponse.make(bytes: StrictJSON.serialize(.object(claims)), headers: [.cacheControl: "no-store"])
    }

    /// RFC 7009 §2: the client's refresh token, or an access token of one of its app sessions, ends that session.
    /// The answer is 200 whatever the token was (§2.2): an unknown token, or another client's, reveals nothing.
    private func revoke(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        let form = try await OAuthForm.read(request, maxBodySize: maxBodySize)
        let client = try await clients.identify(form: form, authorization: request.headers.values(.authorization), realm: realm)
        guard let token = form["token"], !token.isEmpty else { throw OAuthFailure.invalidRequest("missing parameter: token") }
        if let sessionId = try await sessionId(of: token, realm: context.realm), let family = try await refresh.family(realm: realm, id: sessionId),
            family.clientId == client.clientId
        {
            await refresh.end(family, now: clock.now())
        }
        return Response(status: .ok, headers: [.cacheControl: "no-store"])
    }

    /// The app session a refresh token or an access token belongs to.
    private func sessionId(of token: String, realm: Realm) async throws -> String? {
        if let presented = refresh.presented(token, realm: realm.name) { return presented.familyId }
        guard token.utf8.count <= 16384, let verified = try? await accessTokens.verify(token, realm: realm, now: clock.now()) else { return nil }
        return verified.claims["sid"]?.stringValue
    }
}
