// Turning whatever a JSON route throws into an error body with a stable code, hiding internals.
import Hummingbird
import KeywardWire
import Logging
import NIOCore

/// Turns anything a route throws into a JSON error with a stable code. Unexpected errors are logged with
/// the request id and answered without internals.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            return JSONResponse.error(Self.code(for: error.status), error.body ?? error.status.reasonPhrase, status: error.status, requestId: context.id, headers: error.headers)
        } catch is NIOTooManyBytesError {
            return JSONResponse.error(.payloadTooLarge, "request body is larger than the configured limit (http.maxBodySize)", status: .contentTooLarge, requestId: context.id)
        } catch let error as APIError {
            return JSONResponse.error(error.code, error.message, status: error.status, requestId: context.id, reason: error.reason)
        } catch let failure as OAuthFailure {
            return JSONResponse.oauthError(failure)
        } catch let error as StoreError {
            // An outage, not the server's bug: 503 and a retry, as the pages answer. The engine's words stay in the log.
            context.logger.warning("storage failed under a request", metadata: ["error": "\(error)"])
            if case .notFound = error { return JSONResponse.error(.notFound, "not found", status: .notFound, requestId: context.id) }
            return JSONResponse.error(
                .unavailable, "storage is unavailable; try again shortly", status: .serviceUnavailable, requestId: context.id, headers: [.retryAfter: "2"]
            )
        } catch {
            context.logger.error("unhandled error", metadata: ["error": "\(String(reflecting: error))"])
            return JSONResponse.error(.internalError, "internal error; quote the request id when reporting it", status: .internalServerError, requestId: context.id)
        }
    }

    static func code(for status: HTTPResponse.Status) -> ErrorCode {
        switch status.code {
        case 404: .notFound
        case 405: .methodNotAllowed
        case 413: .payloadTooLarge
        case 415: .unsupportedMediaType
        case 503: .unavailable
        case 400..<500: .invalidRequest
        default: .internalError
        }
    }
}
