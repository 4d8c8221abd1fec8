// The push-MFA device API's routes, answering in the original's shapes.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardHTTPInput
import KeywardJOSE
import KeywardWire

/// The push-MFA device API under `/realms/{realm}/push-mfa/` (docs/PUSH-MFA-PROTOCOL.md §3.1). Thin: parse, call the
/// service, answer in the original's shapes.
struct PushMFARoutes {
    let service: PushMFAService
    let events: ChallengeEventStream
    let publicURL: String
    let maxBodySize: Int
    /// For the HTML error page a browser gets when it prefers HTML (docs/PUSH-MFA-PROTOCOL.md §2.1).
    let renderer: PageRenderer

    func register(on router: Router<KeywardRequestContext>) {
        let base = "/realms/:realm/push-mfa"
        router.get("\(base)/enroll/request-token/:handle") { request, context in
            try await answer(request, context) {
                let token = try await service.enrollmentToken(realm: realmName(context), handle: context.parameters.get("handle") ?? "")
                return JSONResponse.make(bytes: Array(token.utf8), headers: Self.noStore, contentType: "application/jwt")
            }
        }
        router.post("\(base)/enroll/complete") { request, context in
            try await answer(request, context) {
                let device = try await deviceRequest(request, context)
                try await service.completeEnrollment(realm: device.realm.name, body: try await jsonBody(request), request: device)
                return status("enrolled")
            }
        }
        router.get("\(base)/login/pending") { request, context in
            try await answer(request, context) {
                // Validated before authentication, as in the original.
                guard let userId = request.uri.queryParameters.get("userId"), !userId.isEmpty else { throw PushMFAError.missingField("userId") }
                let device = try await deviceRequest(request, context)
                return JSONResponse.make(try await service.pendingChallenges(userId: userId, request: device), headers: Self.noStore)
            }
        }
        router.post("\(base)/login/challenges/:cid/respond") { request, context in
            try await answer(request, context) {
                let body = try await jsonBody(request)
                let device = try await deviceRequest(request, context)
                return status(try await service.respond(challengeId: context.parameters.get("cid") ?? "", body: body, request: device))
            }
        }
        router.post("\(base)/login/lockout") { request, context in
            try await answer(request, context) {
                try await service.lockout(request: try await deviceRequest(request, context))
                return status("locked_out")
            }
        }
        router.put("\(base)/device/push-provider") { request, context in
            try await answer(request, context) {
                let device = try await deviceRequest(request, context)
                return status(try await service.updatePushProvider(body: try await jsonBody(request), request: device))
            }
        }
        router.put("\(base)/device/rotate-key") { request, context in
            try await answer(request, context) {
                let device = try await deviceRequest(request, context)
                try await service.rotateKey(body: try await jsonBody(request), request: device)
                return status("rotated")
            }
        }
        router.get("\(base)/enroll/challenges/:id/events") { request, context in
            try await answer(request, context) { try await events.response(realm: realmName(context), rawId: context.parameters.get("id") ?? "", secret: request.uri.queryParameters.get("secret"), kind: .enrollment) }
        }
        router.get("\(base)/login/challenges/:cid/events") { request, context in
            try await answer(request, context) { try await events.response(realm: realmName(context), rawId: context.parameters.get("cid") ?? "", secret: request.uri.queryParameters.get("secret"), kind: .authentication) }
        }
    }

    static let noStore: HTTPFields = [.cacheControl: "no-store", .init("Pragma")!: "no-cache"]

    private func realmName(_ context: KeywardRequestContext) -> String { context.parameters.get("realm") ?? "" }

    private func deviceRequest(_ request: Request, _ context: KeywardRequestContext) async throws(PushMFAError) -> DeviceAuthenticator.Request {
        let realm = try await service.realm(named: realmName(context))
        return DeviceAuthenticator.Request(
            realm: realm, method: request.method.rawValue, url: publicURL + request.uri.path,
            authorization: request.headers[values: .authorization], dpopProofs: request.headers.dpopProofs
        )
    }

    /// The body as a JSON object; nil when empty. Malformed JSON is a 400 here (the original answers 500).
    private func jsonBody(_ request: Request) async throws -> JSONObject? {
        let buffer = try await request.body.collect(upTo: maxBodySize)
        guard buffer.readableBytes > 0 else { return nil }
        do {
            return try StrictJSON.parseObject(Array(buffer.readableBytesView))
        } catch {
            throw PushMFAError.badRequest("Invalid JSON body: \(error.message)")
        }
    }

    private func status(_ value: String) -> Response {
        JSONResponse.make(PushMFAStatusResponse(status: value), headers: Self.noStore)
    }

    private func answer(_ request: Request, _ context: KeywardRequestContext, _ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let error as PushMFAError {
            guard AcceptHeader.prefersHTML(request.headers[.accept]) else { return Self.errorResponse(error) }
            return errorPage(error, context)
        }
    }

    /// The same refusal as a page, for a browser that opened a device URL; status and `WWW-Authenticate` as in JSON.
    private func errorPage(_ error: PushMFAError, _ context: KeywardRequestContext) -> Response {
        var (status, heading, text) = PageErrorMiddleware<KeywardRequestContext>.describe(error)
        if error.status < 500 {
            (status, heading, text) = (HTTPResponse.Status(code: error.status), "Request refused", error.message)
        }
        return renderer.errorPage(
            heading: heading, text: text, status: status, realm: context.parameters.get("realm"), requestId: context.id,
            headers: Self.errorHeaders(error)
        )
    }

    /// `{"error": message}`; a 401 carries the detail in `WWW-Authenticate`, as JAX-RS does for the original.
    static func errorResponse(_ error: PushMFAError) -> Response {
        let body = PushMFAErrorBody(error: error.status == 401 ? "HTTP 401 Unauthorized" : error.message)
        return JSONResponse.make(body, status: HTTPResponse.Status(code: error.status), headers: errorHeaders(error))
    }

    /// What every refusal carries, as JSON or as a page: no caching, and a 401's detail in `WWW-Authenticate`.
    private static func errorHeaders(_ error: PushMFAError) -> HTTPFields {
        var headers: HTTPFields = [.cacheControl: "no-store"]
        if error.status == 401 { headers[.wwwAuthenticate] = "DPoP error_description=\"\(error.message)\"" }
        return headers
    }
}
