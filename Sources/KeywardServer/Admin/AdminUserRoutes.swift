// The admin API's users: list, create, read, update, set a password, delete, and what is theirs.
import Foundation
import Hummingbird

/// `/admin/realms/{realm}/users…`. Thin: parse, check the scope, call Accounts' services, answer.
struct AdminUserRoutes {
    let users: UserService
    let sessions: BrowserSessionService
    let removal: UserRemoval
    let audit: AuditLog
    let maxBodySize: Int

    func register(on realm: RouterGroup<KeywardRequestContext>) {
        realm.get("users") { request, context in
            try context.admin.require(.usersRead)
            let page = try AdminPage(request)
            let filter = try Self.filter(request)
            let found = try await users.users(
                realm: try context.realm.name,
                query: UserQuery(after: page.after, limit: page.limit + 1, usernamePrefix: filter.prefix, enabled: filter.enabled)
            )
            return page.response(found, key: \.id, render: AdminUserBody.init, request: request)
        }
        realm.post("users") { request, context in
            try context.admin.require(.usersWrite)
            var body = try await AdminRequestBody.read(request, maxSize: maxBodySize)
            let username = try body.requiredString("username", maxLength: 512)
            let password = try body.string("password", maxLength: 1024)
            let enabled = try body.bool("enabled")
            try body.finish()
            let realm = try context.realm.name
            let user = try await users.createUser(realm: realm, username: username, password: password, enabled: enabled ?? true)
            var headers = AdminRevision.headers(user.revision)
            headers[.location] = request.uri.path + "/" + user.id
            return AdminJSON.make(AdminUserBody(user), status: .created, headers: headers)
        }
        realm.get("users/:id") { _, context in
            try context.admin.require(.usersRead)
            let user = try await existing(context)
            return AdminJSON.make(AdminUserBody(user), headers: AdminRevision.headers(user.revision))
        }
        realm.patch("users/:id") { request, context in
            try context.admin.require(.usersWrite)
            var body = try await AdminRequestBody.read(request, maxSize: maxBodySize)
            let change = UserChange(username: try body.string("username", maxLength: 512), enabled: try body.bool("enabled"))
            try body.finish()
            guard change != UserChange() else { throw AdminProblem.invalid("the body names nothing to change: give username or enabled") }
            let (realm, id) = (try context.realm.name, try context.userId)
            let expected = try await AdminRevision.expected(request) { try await users.user(realm: realm, id: id)?.revision }
            let user = try await users.update(realm: realm, id: id, change: change, expectedRevision: expected)
            return AdminJSON.make(AdminUserBody(user), headers: AdminRevision.headers(user.revision))
        }
        realm.put("users/:id/password") { request, context in
            try context.admin.require(.usersWrite)
            var body = try await AdminRequestBody.read(request, maxSize: maxBodySize)
            let password = try body.requiredString("password", maxLength: 1024)
            try body.finish()
            _ = try await users.setPassword(realm: try context.realm.name, id: try context.userId, password: password)
            return Response(status: .noContent, headers: [.cacheControl: "no-store"])
        }
        realm.delete("users/:id") { request, context in
            try context.admin.require(.usersWrite)
            let (realm, id) = (try context.realm.name, try context.userId)
            let expected = try await AdminRevision.expected(request) { try await users.user(realm: realm, id: id)?.revision }
            try await removal.delete(realm: realm, id: id, expectedRevision: expected)
            return Response(status: .noContent)
        }
        realm.get("users/:id/sessions") { _, context in
            try context.admin.require(.usersRead)
            let user = try await existing(context)
            let live = try await sessions.sessions(realm: user.realm, userId: user.id).filter { $0.stage == .authenticated }
            return AdminJSON.whole(live, AdminSessionBody.init)
        }
        realm.delete("users/:id/sessions") { _, context in
            try context.admin.require(.usersWrite)
            let user = try await existing(context)
            let ended = try await sessions.endAll(realm: user.realm, userId: user.id)
            await audit.record(.sessionsEndedEverywhere, realm: user.realm, userId: user.id, details: ["sessionsEnded": String(ended)])
            return Response(status: .noContent)
        }
        realm.get("users/:id/identities") { _, context in
            try context.admin.require(.usersRead)
            let user = try await existing(context)
            let linked = try await users.identities(realm: user.realm, userId: user.id)
            return AdminJSON.whole(linked, AdminIdentityBody.init)
        }
    }

    private func existing(_ context: KeywardRequestContext) async throws -> User { try await users.pathUser(context) }

    private static func filter(_ request: Request) throws(AdminProblem) -> (prefix: String?, enabled: Bool?) {
        let query = request.uri.queryParameters
        let prefix = query["username_prefix"].map(String.init)
        if let prefix, prefix.isEmpty || prefix.utf8.count > 512 || prefix.utf8.contains(0) {
            throw .invalid("username_prefix must be 1-512 bytes", field: "username_prefix")
        }
        var enabled: Bool?
        switch query["enabled"] {
        case nil: enabled = nil
        case "true": enabled = true
        case "false": enabled = false
        default: throw .invalid("enabled must be true or false", field: "enabled")
        }
        return (prefix, enabled)
    }
}

extension KeywardRequestContext {
    /// The admin client `AdminAuthentication` proved.
    var admin: AdminCaller {
        get throws(UnwiredRoute) { try caller(AdminCaller.self) }
    }

    /// The `:id` of a user's path.
    var userId: String {
        get throws(AdminProblem) {
            guard let id = parameters.get("id"), (1...128).contains(id.utf8.count), !id.utf8.contains(0) else { throw AdminProblem.notFound("no such user") }
            return id
        }
    }
}

extension UserService {
    /// The user the path's `:id` names in the path's realm; 404 when there is none.
    func pathUser(_ context: KeywardRequestContext) async throws -> User {
        let id = try context.userId
        guard let user = try await user(realm: try context.realm.name, id: id) else { throw AdminProblem.notFound("user '\(id.prefix(64))' does not exist") }
        return user
    }
}
