// The admin API's clients: list, create (confidential, public, broker, admin), read, delete.
import Foundation
import Hummingbird

/// `/admin/realms/{realm}/clients…`. A client made here may hold only admin scopes its maker holds: a client allowed
/// to manage clients cannot make itself a stronger one.
struct AdminClientRoutes {
    let clients: ClientService
    let maxBodySize: Int

    func register(on realm: RouterGroup<KeywardRequestContext>) {
        realm.get("clients") { request, context in
            try context.admin.require(.clientsRead)
            let page = try AdminPage(request)
            let all = try await clients.listClients(realm: try context.realm.name)
            return page.response(all: all, key: \.clientId, render: AdminClientBody.init, request: request)
        }
        realm.post("clients") { request, context in
            let admin = try context.admin
            try admin.require(.clientsWrite)
            var body = try await AdminRequestBody.read(request, maxSize: maxBodySize)
            let clientId = try body.requiredString("client_id", maxLength: 128)
            let type = try body.string("type") ?? "confidential"
            let scope = try body.string("scope") ?? ""
            let requireDPoP = try body.bool("require_dpop") ?? true
            let redirectURIs = try body.strings("redirect_uris", maxCount: ClientRedirects.maxURIs) ?? []
            let postLogoutRedirectURIs = try body.strings("post_logout_redirect_uris", maxCount: ClientRedirects.maxURIs) ?? []
            let (firstParty, requirePAR, broker) = (try body.bool("first_party") ?? false, try body.bool("require_par") ?? false, try body.bool("broker") ?? false)
            let adminScopes = try Self.adminScopes(try body.strings("admin_scopes", maxCount: AdminScope.allCases.count) ?? [])
            try body.finish()
            let redirects = try ClientRedirects(
                redirectURIs: redirectURIs, postLogoutRedirectURIs: postLogoutRedirectURIs, firstParty: firstParty, requirePAR: requirePAR, broker: broker
            )
            let realm = try context.realm.name
            var answer: AdminClientBody
            switch type {
            case "confidential":
                let (client, secret) = try await clients.createClient(
                    realm: realm, clientId: clientId, requireDPoP: requireDPoP, scope: scope, redirects: redirects, adminScopes: adminScopes,
                    grantor: admin.scopes
                )
                answer = AdminClientBody(client)
                answer.clientSecret = secret
            case "public":
                guard adminScopes.isEmpty else { throw AdminProblem.invalid("a public client cannot hold admin scopes", field: "admin_scopes") }
                answer = AdminClientBody(try await clients.createPublicClient(realm: realm, clientId: clientId, requireDPoP: requireDPoP, scope: scope, redirects: redirects))
            default:
                throw AdminProblem.invalid("type must be confidential or public", field: "type")
            }
            return AdminJSON.make(answer, status: .created, headers: [.location: request.uri.path + "/" + pathSegment(clientId), .cacheControl: "no-store"])
        }
        realm.get("clients/:clientId") { _, context in
            try context.admin.require(.clientsRead)
            let clientId = context.decodedParameter("clientId")
            guard let client = try await clients.client(realm: try context.realm.name, clientId: clientId) else { throw ClientError.notFound(clientId) }
            return AdminJSON.make(AdminClientBody(client), headers: [.cacheControl: "no-store"])
        }
        realm.delete("clients/:clientId") { _, context in
            try context.admin.require(.clientsWrite)
            try await clients.deleteClient(realm: try context.realm.name, clientId: context.decodedParameter("clientId"))
            return Response(status: .noContent)
        }
    }

    private static func adminScopes(_ names: [String]) throws(AdminProblem) -> Set<AdminScope> {
        var scopes = Set<AdminScope>()
        for name in names {
            guard let scope = AdminScope(rawValue: name) else {
                throw .invalid("admin scope '\(name.prefix(64))' is unknown; use of: \(AdminScope.allCases.map(\.rawValue).joined(separator: ", "))", field: "admin_scopes")
            }
            scopes.insert(scope)
        }
        return scopes
    }
}
