// The DPoP gate in front of a protected resource: the caller it proves goes on the request context.
import Hummingbird

extension DPoPResourceGuard.Caller: RequestCaller {}

/// The DPoP gate (`DPoPResourceGuard`) in front of a protected resource's route, behind `RealmResolution`: the
/// proven caller (the token's claims, the proof's key) goes on the context for the route to read; a refusal is a
/// 401 with a `WWW-Authenticate: DPoP` challenge (RFC 9449 §7.1), or 503 when storage could not be asked.
struct DPoPAuthentication: RouterMiddleware {
    let gate: DPoPResourceGuard
    let publicURL: String

    func handle(
        _ request: Request, context: KeywardRequestContext, next: (Request, KeywardRequestContext) async throws -> Response
    ) async throws -> Response {
        let realm = try context.realm
        let caller: DPoPResourceGuard.Caller
        do throws(DPoPResourceGuard.Refusal) {
            caller = try await gate.authenticate(.init(
                realm: realm, method: request.method.rawValue, url: publicURL + request.uri.path,
                authorization: request.headers.values(.authorization), dpopProofs: request.headers.dpopProofs
            ))
        } catch {
            throw error.oauthFailure(algorithms: gate.policy.proof.allowedAlgorithms)
        }
        var context = context
        context.authenticatedCaller = caller
        return try await next(request, context)
    }
}
