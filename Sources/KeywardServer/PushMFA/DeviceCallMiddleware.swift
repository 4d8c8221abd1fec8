// In front of the push-MFA device API: the original's error shapes, its checks before authentication, the device.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardHTTPInput
import KeywardJOSE
import KeywardWire

extension DeviceAuthenticator.Device: RequestCaller {}

/// The push-MFA device API's refusals in the original's shapes (docs/PUSH-MFA-PROTOCOL.md §2.1): `{"error": …}`, or
/// the same refusal as a page for a browser that prefers HTML; the realm middleware's included. Outermost in the
/// device API's group.
struct PushMFAErrorBodies: RouterMiddleware {
    /// For the HTML error page a browser gets when it prefers HTML.
    let renderer: PageRenderer

    func handle(
        _ request: Request, context: KeywardRequestContext, next: (Request, KeywardRequestContext) async throws -> Response
    ) async throws -> Response {
        let error: PushMFAError
        do {
            return try await next(request, context)
        } catch let refusal as PushMFAError {
            error = refusal
        } catch let refusal as APIError where refusal.code == .realmNotFound {
            error = .notFound("Realm not found")
        } catch let refusal as APIError where refusal.status == .serviceUnavailable {
            error = .unavailable
        }
        guard AcceptHeader.prefersHTML(request.headers[.accept]) else { return Self.errorResponse(error) }
        return errorPage(error, context)
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

/// In front of an enrolled device's call (docs/PUSH-MFA-PROTOCOL.md §3.2), the authenticator is the middleware: its
/// JSON body parsed, what the original checks before authentication (in its order), then the device authenticated
/// with its stored key and put on the context.
extension DeviceAuthenticator: RouterMiddleware {
    /// The original's checks that come before authentication.
    enum CheckedFirst: Sendable {
        case nothing
        /// `GET /login/pending`: the `userId` query parameter (§3.5).
        case userIdQuery
        /// `POST /login/challenges/{cid}/respond`: a body, and a challenge id that is a UUID (§3.6). Keyward
        /// authenticates before it looks the challenge up, so a stranger cannot probe which ids exist.
        case respondBodyAndChallengeId
    }

    /// This authenticator in front of one route: `readsBody`, the body is a JSON object the route reads
    /// (`context.jsonBody`), parsed before authentication as the original does.
    func call(checkingFirst checkedFirst: CheckedFirst, readsBody: Bool) -> DeviceAuthenticator {
        var call = self
        call.checkedFirst = checkedFirst
        call.readsBody = readsBody
        return call
    }

    func handle(
        _ request: Hummingbird.Request, context: KeywardRequestContext,
        next: (Hummingbird.Request, KeywardRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        if readsBody { context.jsonBody = try await Self.jsonBody(request, maxSize: maxBodySize) }
        switch checkedFirst {
        case .nothing:
            break
        case .userIdQuery:
            guard let userId = request.uri.queryParameters.get("userId"), !userId.isEmpty else { throw PushMFAError.missingField("userId") }
        case .respondBodyAndChallengeId:
            guard context.jsonBody != nil else { throw PushMFAError.badRequest("Request body required") }
            _ = try PushMFAInput.uuid(context.parameters.get("cid") ?? "", "cid")
        }
        context.authenticatedCaller = try await authenticate(deviceRequest(request, context))
        return try await next(request, context)
    }

    /// The headers and URL the gate checks, and the realm resolved in front.
    func deviceRequest(_ request: Hummingbird.Request, _ context: KeywardRequestContext) throws(UnwiredRoute) -> DeviceAuthenticator.Request {
        DeviceAuthenticator.Request(
            realm: try context.realm, method: request.method.rawValue, url: publicURL + request.uri.path,
            authorization: request.headers[values: .authorization], dpopProofs: request.headers.dpopProofs
        )
    }

    /// The body as a JSON object; nil when empty. Malformed JSON is a 400 here (the original answers 500).
    static func jsonBody(_ request: Hummingbird.Request, maxSize: Int) async throws -> JSONObject? {
        let buffer = try await request.body.collect(upTo: maxSize)
        guard buffer.readableBytes > 0 else { return nil }
        do {
            return try requestJSONObject(buffer.readableBytesView)
        } catch .malformed(let detail) {
            throw PushMFAError.badRequest("Invalid JSON body: \(detail)")
        } catch {
            throw PushMFAError.badRequest("Invalid JSON body: strings must not contain NUL")
        }
    }
}
