// The token endpoint's refusals in RFC 6749's body, the realm middleware's included.
import Hummingbird

/// In front of the token endpoint: what the realm middleware refuses (an unknown realm, a realm that could not be
/// read) is answered in the RFC 6749 §5.2 body the endpoint's clients parse, like the endpoint's own refusals
/// (`OAuthFailure`, rendered by `ErrorMiddleware`).
struct OAuthErrorBodies: RouterMiddleware {
    func handle(
        _ request: Request, context: KeywardRequestContext, next: (Request, KeywardRequestContext) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return JSONResponse.oauthError(OAuthFailure(status: Int(error.status.code), code: error.code, description: error.message))
        }
    }
}
