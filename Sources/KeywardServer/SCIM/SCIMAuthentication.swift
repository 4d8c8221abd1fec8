// In front of every SCIM route: a directory's bearer token of the realm, or an admin client's DPoP-bound token.
import Foundation
import Hummingbird

/// A directory, as its SCIM token proved it.
struct SCIMDirectoryCaller: RequestCaller {
    let realm: String
    let tokenId: String
}

/// The SCIM API's gate, behind the realm middleware. Directories (Entra ID, Okta) send `Authorization: Bearer`
/// with a token made by `keyward scim-tokens create`: it must be one of the path realm's. Any other scheme goes to
/// the admin API's gate (`AdminAuthentication`: a DPoP-bound client_credentials token), and then the client needs
/// `users:read` to read and `users:write` to change anything. The route runs as the caller (`AuditLog.actor`).
struct SCIMAuthentication: RouterMiddleware {
    let tokens: SCIMTokenService
    let admin: AdminAuthentication

    func handle(
        _ request: Request, context: KeywardRequestContext, next: (Request, KeywardRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let realm = context.resolvedRealm else { throw UnwiredRoute(missing: "the realm of a SCIM route") }
        let authorization = request.headers.values(.authorization)
        guard authorization.count == 1, let bearer = Self.bearerCredential(authorization[0]) else {
            if authorization.isEmpty { throw Self.challenge(realm: realm.name, error: nil, "a SCIM token (Authorization: Bearer) is required") }
            return try await admin.handle(request, context: context) { request, context in
                guard let caller = context.authenticatedCaller as? AdminCaller else { throw UnwiredRoute(missing: "an admin caller") }
                try caller.require(Self.reads(request) ? .usersRead : .usersWrite)
                return try await next(request, context)
            }
        }
        let token: SCIMToken?
        do {
            token = try await tokens.authenticate(realm: realm.name, presented: bearer)
        } catch {
            throw AdminProblem.unavailable
        }
        guard let token else {
            throw Self.challenge(realm: realm.name, error: "invalid_token", "the token is not one of realm '\(realm.name)''s SCIM tokens (revoked, or made for another realm)")
        }
        var context = context
        context.authenticatedCaller = SCIMDirectoryCaller(realm: realm.name, tokenId: token.id)
        return try await AuditLog.$actor.withValue(AuditActor(realm: realm.name, clientId: "scim-token:" + token.id, via: "scim")) {
            try await next(request, context)
        }
    }

    /// A request that changes nothing: a GET, or a search sent as a POST body (RFC 7644 §3.4.3).
    static func reads(_ request: Request) -> Bool {
        request.method == .get || request.method == .head || (request.method == .post && request.uri.path.hasSuffix("/.search"))
    }

    /// The credential of `Bearer <credential>` (the scheme's case does not matter, RFC 7235 §2.1); nil for any other scheme.
    static func bearerCredential(_ header: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1]).trimmingCharacters(in: .whitespaces)
    }

    static func challenge(realm: String, error: String?, _ detail: String) -> SCIMError {
        var refusal = SCIMError(.unauthorized, nil, detail)
        refusal.headers[.wwwAuthenticate] = "Bearer realm=\"scim/\(realm)\"" + (error.map { ", error=\"\($0)\"" } ?? "")
        return refusal
    }
}
