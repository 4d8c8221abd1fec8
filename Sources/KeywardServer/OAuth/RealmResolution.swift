// The one resolver of a route's realm: the middleware in front of every route under /realms/{realm}.
import Hummingbird

/// Resolves the `realm` path parameter once, in front of every route under `/realms/{realm}` but the push-MFA event
/// streams, which read no realm (from
/// `RealmService`'s few seconds' cache), and puts the realm on the context. An unknown realm is `realm_not_found`
/// (404) everywhere, a realm that could not be read 503; each route family's error middleware answers them in its
/// own body (JSON, RFC 6749, the push-MFA original's, an HTML page).
struct RealmResolution: RouterMiddleware {
    let realms: RealmService

    func handle(
        _ request: Request, context: KeywardRequestContext, next: (Request, KeywardRequestContext) async throws -> Response
    ) async throws -> Response {
        let name = context.parameters.get("realm") ?? ""
        let found: Realm?
        do {
            found = try await realms.realm(named: name)
        } catch {
            context.logger.error("realm could not be read", metadata: ["error": "\(String(reflecting: error))"])
            throw APIError.realmUnavailable
        }
        guard let realm = found else { throw APIError.realmNotFound(name) }
        var context = context
        context.resolvedRealm = realm
        return try await next(request, context)
    }
}
