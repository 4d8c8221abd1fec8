// SCIM's errors (RFC 7644 §3.12): one body for every refusal of the SCIM API, with `scimType` where the RFC names one.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardJOSE
import KeywardWire

/// A refusal answered as `application/scim+json`: `schemas` the error URN, `status` the HTTP status as a string (as
/// RFC 7644 §3.12 has it), `scimType` one of the RFC's detail codes when one applies, `detail` what was wrong.
struct SCIMError: Error, Sendable {
    /// RFC 7644 §3.12, Table 9.
    enum SCIMType: String, Sendable {
        case invalidFilter, tooMany, uniqueness, mutability, invalidSyntax, invalidPath, noTarget, invalidValue, invalidVers, sensitive
    }

    let status: HTTPResponse.Status
    let scimType: SCIMType?
    let detail: String
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ scimType: SCIMType? = nil, _ detail: String) {
        (self.status, self.scimType, self.detail) = (status, scimType, detail)
    }

    static let schema = "urn:ietf:params:scim:api:messages:2.0:Error"

    /// What every other error the routes meet means here: the admin API's mapping of the parts' errors, in SCIM's shape.
    init(_ problem: AdminProblem) {
        let scimType: SCIMType? = switch problem.status {
        case .conflict: .uniqueness
        case .badRequest: .invalidValue
        default: nil
        }
        self.init(problem.status, scimType, problem.detail)
        headers = problem.headers
    }

    func response(requestId: String) -> Response {
        var body: JSONObject = ["schemas": .array([.string(Self.schema)]), "status": .string(String(status.code)), "detail": .string(detail)]
        if let scimType { body["scimType"] = .string(scimType.rawValue) }
        var fields = headers
        fields[.cacheControl] = "no-store"
        if status == .serviceUnavailable { fields[.retryAfter] = "2" }
        return JSONResponse.make(bytes: StrictJSON.serialize(body), status: status, headers: fields, contentType: SCIMMedia.type)
    }
}

enum SCIMMedia {
    /// RFC 7644 §3.1: SCIM's own media type, in both directions; `application/json` is accepted from clients too.
    static let type = "application/scim+json"
}

/// In front of every SCIM route: anything thrown below becomes a SCIM error.
struct SCIMErrorMiddleware: RouterMiddleware {
    func handle(
        _ request: Request, context: KeywardRequestContext, next: (Request, KeywardRequestContext) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as SCIMError {
            return error.response(requestId: context.id)
        } catch {
            return SCIMError(AdminProblemMiddleware.problem(for: error, context: context)).response(requestId: context.id)
        }
    }
}

/// Added to the router after the SCIM routes, so it wraps only the router's not-found answer: a path under
/// `/scim/v2/` that names no endpoint is a SCIM error too (a 405 for a served path stays `MethodNotAllowedMiddleware`'s).
struct SCIMUnmatchedPathMiddleware: RouterMiddleware {
    func handle(
        _ request: Request, context: KeywardRequestContext, next: (Request, KeywardRequestContext) async throws -> Response
    ) async throws -> Response {
        guard request.uri.path.hasPrefix("/scim/v2/") else { return try await next(request, context) }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            return SCIMError(.notFound, nil, "no SCIM endpoint at \(request.uri.path.prefix(200)): a realm's are under /scim/v2/realms/{realm}/ (Users, Schemas, ResourceTypes, ServiceProviderConfig)")
                .response(requestId: context.id)
        }
    }
}
