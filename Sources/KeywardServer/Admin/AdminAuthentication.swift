// In front of every admin route: the client's DPoP-bound token, the client it names and what that client may do.
import Hummingbird
import KeywardJOSE

/// A client of the admin API, as `AdminAuthentication` proved it: its realm, its id and the admin scopes both its
/// token and its current registration grant.
struct AdminCaller: RequestCaller {
    let realm: String
    let clientId: String
    let scopes: Set<AdminScope>

    /// The master realm's clients manage every realm (issue 33); every other client only its own.
    static let masterRealm = AdminScope.masterRealm

    var isMaster: Bool { realm == Self.masterRealm }

    /// Refuses the request unless the client holds `scope`. `vouching`: the request changes who an issuer or a provider
    /// vouches for (its keys, its endpoints): whoever controls those signs in as the users linked to it, so it takes
    /// `users:write` besides (security review of issue 33).
    func require(_ scope: AdminScope, vouching: Bool = false) throws(AdminProblem) {
        guard scopes.contains(scope) else {
            let why = vouching ? "; changing what an issuer or a provider trusts decides who signs in as its users" : ""
            var problem = AdminProblem.forbidden("insufficient_scope", "this client's token does not grant \(scope.rawValue)\(why)")
            problem.headers[.wwwAuthenticate] = "DPoP error=\"insufficient_scope\", scope=\"\(scope.tokenScope)\""
            throw problem
        }
    }
}

/// The admin API's gate, behind `AdminProblemMiddleware` and, for routes under a realm, the realm middleware:
/// 1. the token must be a DPoP-bound access token of the path's realm or of the master realm, checked by the one
///    DPoP gate (`DPoPResourceGuard`) against that realm's keys;
/// 2. it must be a client's own token (client_credentials: `sub` is `service-account-` + `client_id`), never one
///    issued for a person;
/// 3. the client must still exist and hold the admin scopes its token names: only those both grant count, so
///    deleting a client or taking its scopes away takes effect at once, not when its tokens expire.
/// The route's task then runs as that client (`AuditLog.actor`), and a successful write is an `AdminChange` event.
struct AdminAuthentication: RouterMiddleware {
    let gate: DPoPResourceGuard
    let realms: RealmService
    let clients: ClientService
    let audit: AuditLog
    let publicURL: String
    let clock: any KeywardClock
    /// Refused admin calls are audited at most once per realm and reason a minute: a refusal costs its sender nothing.
    let refusals: RefusalAuditSampler

    func handle(
        _ request: Request, context: KeywardRequestContext, next: (Request, KeywardRequestContext) async throws -> Response
    ) async throws -> Response {
        var caller: AdminCaller?
        do {
            return try await authenticated(request, context: context, next: next, caller: &caller)
        } catch {
            await recordRefusal(error, request: request, context: context, caller: caller)
            throw error
        }
    }

    /// An `AdminRefused` event for a call refused its credentials (401) or its reach (403): which rule (`reason`), the
    /// route, and the client when it was known by then.
    private func recordRefusal(_ error: any Error, request: Request, context: KeywardRequestContext, caller: AdminCaller?) async {
        let reason: String
        switch error {
        case let failure as OAuthFailure where failure.status == 401: reason = failure.code.rawValue
        case let problem as AdminProblem where problem.status == .forbidden || problem.status == .unauthorized: reason = problem.code
        default: return
        }
        let realm = context.resolvedRealm?.name ?? AdminCaller.masterRealm
        guard let suppressed = refusals.admit(.init(realm: realm, reason: reason), now: clock.now()) else { return }
        var details = ["reason": reason, "method": request.method.rawValue, "route": context.endpointPath ?? ""]
        if suppressed > 0 { details["suppressed"] = String(suppressed) }
        if let caller, caller.realm != realm { details["clientRealm"] = caller.realm }
        await audit.record(.adminRefused, realm: realm, userId: nil, clientId: caller?.clientId, details: details)
    }

    private func authenticated(
        _ request: Request, context: KeywardRequestContext, next: (Request, KeywardRequestContext) async throws -> Response, caller provenCaller: inout AdminCaller?
    ) async throws -> Response {
        let pathRealm = context.resolvedRealm
        let tokenRealm = try await realmOfToken(request, pathRealm: pathRealm)
        let proven: DPoPResourceGuard.Caller
        do throws(DPoPResourceGuard.Refusal) {
            proven = try await gate.authenticate(.init(
                realm: tokenRealm, method: request.method.rawValue, url: publicURL + request.uri.path,
                authorization: request.headers.values(.authorization), dpopProofs: request.headers.dpopProofs
            ))
        } catch {
            throw error.oauthFailure(algorithms: gate.policy.proof.allowedAlgorithms)
        }
        let caller = try await adminCaller(proven, realm: tokenRealm.name)
        provenCaller = caller
        if let pathRealm, pathRealm.name != caller.realm, !caller.isMaster {
            throw AdminProblem.forbidden("realm_forbidden", "client '\(caller.clientId)' of realm '\(caller.realm)' cannot manage realm '\(pathRealm.name)'")
        }
        if request.method != .get, request.method != .head, !AdminRevision.routesWithRevisions.contains(context.endpointPath ?? "") {
            try AdminRevision.refuseTags(request)
        }
        var context = context
        context.authenticatedCaller = caller
        let actor = AuditActor(realm: caller.realm, clientId: caller.clientId, via: "admin-api")
        let response = try await AuditLog.$actor.withValue(actor) { try await next(request, context) }
        if request.method != .get, request.method != .head, (200..<300).contains(response.status.code) {
            await AuditLog.$actor.withValue(actor) {
                await audit.record(
                    .adminChange, realm: pathRealm?.name ?? caller.realm, userId: nil,
                    details: ["method": request.method.rawValue, "route": context.endpointPath ?? "", "path": request.uri.path]
                )
            }
        }
        return response
    }

    /// The realm whose keys must have signed the token: the path's, or the master realm's when the token says it
    /// comes from there. The claim only picks the keys; the gate then checks the issuer and the signature.
    private func realmOfToken(_ request: Request, pathRealm: Realm?) async throws -> Realm {
        let issuer = Self.unverifiedIssuer(request.headers.values(.authorization))
        if let pathRealm, issuer == nil || issuer == realms.issuer(of: pathRealm.name) { return pathRealm }
        if pathRealm == nil, let issuer, issuer != realms.issuer(of: AdminCaller.masterRealm) {
            throw AdminProblem.forbidden("realm_forbidden", "only the master realm's ('\(AdminCaller.masterRealm)') clients list and create realms")
        }
        if issuer == realms.issuer(of: AdminCaller.masterRealm) || pathRealm == nil {
            let master: Realm?
            do {
                master = try await realms.realm(named: AdminCaller.masterRealm)
            } catch {
                throw AdminProblem.unavailable
            }
            if let master { return master }
        }
        let accepted = [pathRealm.map { "realm '\($0.name)'" }, "the master realm ('\(AdminCaller.masterRealm)')"].compactMap { $0 }
        throw OAuthFailure(
            status: 401, code: .invalidToken, description: "the admin API accepts tokens of \(accepted.joined(separator: " or ")) only",
            challenge: "DPoP error=\"invalid_token\""
        )
    }

    private static func unverifiedIssuer(_ authorization: [String]) -> String? {
        guard authorization.count == 1 else { return nil }
        let parts = authorization[0].split(separator: " ", maxSplits: 1)
        guard parts.count == 2, let token = try? UnverifiedJWT(parts[1]) else { return nil }
        return token.claims["iss"]?.stringValue
    }

    private func adminCaller(_ proven: DPoPResourceGuard.Caller, realm: String) async throws -> AdminCaller {
        guard let clientId = proven.claims["client_id"]?.stringValue, proven.subject == "service-account-" + clientId else {
            throw AdminProblem.forbidden("not_an_admin_client", "the admin API takes a client's own token (client_credentials), not one issued for a person")
        }
        let client: OAuthClient?
        do {
            client = try await clients.client(realm: realm, clientId: clientId)
        } catch {
            throw AdminProblem.unavailable
        }
        guard let client, !client.isPublic else {
            throw OAuthFailure(status: 401, code: .invalidToken, description: "client '\(clientId)' no longer exists", challenge: "DPoP error=\"invalid_token\"")
        }
        // A client deleted and made again under the same id is a new client: tokens issued before it was made are not its
        // (security review of issue 33).
        guard let issuedAt = proven.claims["iat"]?.numberValue, issuedAt >= client.createdAt.timeIntervalSince1970.rounded(.down) else {
            throw OAuthFailure(
                status: 401, code: .invalidToken, description: "the token was issued before client '\(clientId)' was made", challenge: "DPoP error=\"invalid_token\""
            )
        }
        let granted = AdminScope.inTokenScope(proven.claims["scope"]?.stringValue ?? "").intersection(client.adminScopes)
        guard !granted.isEmpty else {
            throw AdminProblem.forbidden("not_an_admin_client", "client '\(clientId)' holds no admin scope its token names")
        }
        return AdminCaller(realm: realm, clientId: clientId, scopes: granted)
    }
}
