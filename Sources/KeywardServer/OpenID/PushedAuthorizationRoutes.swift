// `POST /realms/{realm}/protocol/openid-connect/ext/par`: a client pushes its authorization request first (RFC 9126).
import Foundation
import HTTPTypes
import Hummingbird
import KeywardJOSE

/// The pushed authorization request endpoint (RFC 9126 §2): the client authenticates as at the token endpoint,
/// its request is checked as the authorization endpoint would, and it gets back a `request_uri` for the browser.
/// Refusals are RFC 6749 §5.2 bodies (RFC 9126 §2.3).
struct PushedAuthorizationRoutes: Sendable {
    let service: AuthorizationService
    let clients: ClientAuthentication
    let realmResolution: RealmResolution
    let maxBodySize: Int

    func register(on router: Router<KeywardRequestContext>) {
        router.group("/realms/:realm/protocol/openid-connect/ext/par").add(middleware: OAuthErrorBodies()).add(middleware: realmResolution)
            .post { request, context in try await push(request, context) }
    }

    private func push(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        let form = try await OAuthForm.read(request, maxBodySize: maxBodySize)
        let client = try await clients.identify(form: form, authorization: request.headers.values(.authorization), realm: realm)
        let pushed = try service.push(form, realm: realm, client: client)
        let answer: JSONObject = ["request_uri": .string(pushed.requestURI), "expires_in": .number(Double(pushed.expiresIn))]
        return JSONResponse.make(bytes: StrictJSON.serialize(.object(answer)), status: .created, headers: [.cacheControl: "no-store"])
    }
}
