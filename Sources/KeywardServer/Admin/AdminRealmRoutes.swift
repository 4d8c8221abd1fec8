// The admin API's realms (the master realm's clients list and create them) and each realm's signing keys.
import Foundation
import Hummingbird

/// `/admin/realms`, `/admin/realms/{realm}` and its `keys`.
struct AdminRealmRoutes {
    let realms: RealmService
    let keys: RealmKeyService
    let maxBodySize: Int

    /// The routes without a realm in the path: only the master realm's clients reach them (`AdminAuthentication`).
    func registerTop(on admin: RouterGroup<KeywardRequestContext>) {
        admin.get("realms") { request, context in
            try context.admin.require(.realmsRead)
            let page = try AdminPage(request)
            return page.response(all: try await realms.listRealms(), key: \.name, render: body, request: request)
        }
        admin.post("realms") { request, context in
            try context.admin.require(.realmsWrite)
            var input = try await AdminRequestBody.read(request, maxSize: maxBodySize)
            let name = try input.requiredString("name", maxLength: 64)
            let displayName = try input.string("display_name", maxLength: 256)
            let algorithm = try input.string("signing_algorithm", maxLength: 16) ?? "ES256"
            let lifetime = try input.int("access_token_lifetime") ?? 300
            try input.finish()
            let realm = try await realms.createRealm(name: name, displayName: displayName, signingAlgorithm: algorithm, accessTokenLifetime: lifetime)
            return AdminJSON.make(body(realm), status: .created, headers: [.location: request.uri.path + "/" + realm.name, .cacheControl: "no-store"])
        }
    }

    func register(on realm: RouterGroup<KeywardRequestContext>) {
        realm.get("") { _, context in
            try context.admin.require(.realmsRead)
            return AdminJSON.make(body(try context.realm), headers: [.cacheControl: "no-store"])
        }
        realm.get("keys") { _, context in
            try context.admin.require(.keysRead)
            let listed = try await keys.listKeys(realm: try context.realm.name)
            return AdminJSON.whole(listed, AdminSigningKeyBody.init)
        }
        realm.post("keys/rotate") { _, context in
            try context.admin.require(.keysWrite)
            let key = try await keys.rotate(realm: try context.realm)
            return AdminJSON.make(AdminSigningKeyBody(key), status: .created, headers: [.cacheControl: "no-store"])
        }
    }

    private func body(_ realm: Realm) -> AdminRealmBody { AdminRealmBody(realm, issuer: realms.issuer(of: realm.name)) }
}
