// `POST /realms/{realm}/protocol/openid-connect/ext/par`: a client pushes its authorization request first (RFC 9126).
import Foundation
import HTTPTypes
import Hummingbird
import KeywardHTTPInput
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
        let mediaType = request.headers[.contentType]?.split(separator: ";").first?.trimmingBlanks.lowercased()
        guard mediaType == "application/x-www-form-urlencoded" else {
            throw OAuthFailure.invalidRequest("Content-Type must be application/x-www-form-urlencoded")
        }
        let body = try await request.body.collect(upTo: maxBodySize)
        let form: [String: String]
        do throws(FormBody.Failure) {
            form = try FormBody.parse(body.readableBytesView)
        } catch .duplicate(let name) {
            throw OAuthFailure.invalidRequest("parameter '\(name.prefix(64))' appears more than once")
        } catch {
            throw OAuthFailure.invalidRequest("malformed form body")
        }
        let client = try await clients.identify(form: form, authorization: request.headers.values(.authorization), realm: realm)
        let pushed = try service.push(form, realm: realm, client: client)
        let answer: JSONObject = ["request_uri": .string(pushed.requestURI), "expires_in": .number(Double(pushed.expiresIn))]
        return JSONResponse.make(bytes: StrictJSON.serialize(.object(answer)), status: .created, headers: [.cacheControl: "no-store"])
    }
}
