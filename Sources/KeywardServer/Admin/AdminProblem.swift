// The admin API's errors: one shape for all of them, RFC 9457 problem details with a stable code.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardJOSE
import KeywardWire
import NIOCore

/// A refusal of the admin API, answered as `application/problem+json` (RFC 9457): `type` is
/// `urn:keyward:problem:` + `code`, `title` the status's phrase, `detail` what was wrong, naming the input at fault,
/// and the extension members `code` (stable, to branch on), `request_id` and, where one input is at fault, `field`.
struct AdminProblem: Error, Sendable {
    let status: HTTPResponse.Status
    let code: String
    let detail: String
    var field: String?
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ code: String, _ detail: String, field: String? = nil) {
        (self.status, self.code, self.detail, self.field) = (status, code, detail, field)
    }

    static let typePrefix = "urn:keyward:problem:"

    static func invalid(_ detail: String, field: String? = nil) -> AdminProblem { AdminProblem(.badRequest, "invalid_request", detail, field: field) }
    static func notFound(_ detail: String) -> AdminProblem { AdminProblem(.notFound, "not_found", detail) }
    static func conflict(_ detail: String) -> AdminProblem { AdminProblem(.conflict, "conflict", detail) }
    static func stale(_ detail: String) -> AdminProblem { AdminProblem(.preconditionFailed, "precondition_failed", detail) }
    static func forbidden(_ code: String, _ detail: String) -> AdminProblem { AdminProblem(.forbidden, code, detail) }
    static let unavailable = AdminProblem(.serviceUnavailable, "unavailable", "storage is unavailable; try again shortly")

    func response(requestId: String) -> Response {
        var body: JSONObject = [
            "type": .string(Self.typePrefix + code), "title": .string(status.reasonPhrase), "status": .number(Double(status.code)),
            "detail": .string(detail), "code": .string(code), "request_id": .string(requestId),
        ]
        if let field { body["field"] = .string(field) }
        var fields = headers
        fields[.cacheControl] = "no-store"
        if status == .serviceUnavailable { fields[.retryAfter] = "2" }
        return JSONResponse.make(bytes: StrictJSON.serialize(body), status: status, headers: fields, contentType: "application/problem+json")
    }
}

/// What a part's own error means to the admin API (the admin part maps every service error it can meet).
protocol AdminProblemConvertible: Error {
    var adminProblem: AdminProblem { get }
}

/// In front of every admin route: anything thrown below becomes a problem; an unexpected error is logged and
/// answered without internals.
struct AdminProblemMiddleware: RouterMiddleware {
    func handle(
        _ request: Request, context: KeywardRequestContext, next: (Request, KeywardRequestContext) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return Self.problem(for: error, context: context).response(requestId: context.id)
        }
    }

    static func problem(for error: any Error, context: KeywardRequestContext) -> AdminProblem {
        switch error {
        case let problem as AdminProblem:
            return problem
        case let convertible as any AdminProblemConvertible:
            return convertible.adminProblem
        case let error as APIError:
            return AdminProblem(error.status, error.code.rawValue, error.message)
        case let failure as OAuthFailure:
            var problem = AdminProblem(HTTPResponse.Status(code: failure.status), failure.code.rawValue, failure.description)
            if let challenge = failure.challenge { problem.headers[.wwwAuthenticate] = challenge }
            if let nonce = failure.dpopNonce { problem.headers[.dpopNonce] = nonce }
            return problem
        case let error as StoreError:
            switch error {
            case .notFound(let message): return .notFound(message)
            case .conflict(let message): return .conflict(message)
            case .unavailable:
                context.logger.warning("storage failed under an admin request", metadata: ["error": "\(error)"])
                return .unavailable
            }
        case let error as HTTPError:
            return AdminProblem(error.status, ErrorMiddleware<KeywardRequestContext>.code(for: error.status).rawValue, error.body ?? error.status.reasonPhrase)
        case is NIOTooManyBytesError:
            return AdminProblem(.contentTooLarge, "payload_too_large", "the body is larger than the configured limit (http.maxBodySize)")
        default:
            context.logger.error("unhandled error", metadata: ["error": "\(String(reflecting: error))"])
            return AdminProblem(.internalServerError, "internal_error", "internal error; quote the request id when reporting it")
        }
    }
}
