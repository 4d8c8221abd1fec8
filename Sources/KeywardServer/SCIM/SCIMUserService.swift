// What the SCIM Users endpoints do: search, read, create, replace, patch and delete a realm's users through Accounts.
import Foundation
import KeywardHTTPInput
import KeywardJOSE

/// The logic behind `/Users`. A user is Accounts' user and its profile; every change goes through `UserService`
/// (so `active: false` ends what `keyward users disable` ends) and `UserRemoval`, as the CLI's and the admin API's do.
struct SCIMUserService: Sendable {
    let users: UserService
    let removal: UserRemoval
    let publicURL: String

    struct Listing: Sendable {
        var total: Int
        var startIndex: Int
        var resources: [JSONObject]
    }

    func list(realm: String, filter: String?, startIndex: Int, count: Int) async throws -> Listing {
        var match: UserMatch?
        if let filter { match = try SCIMUserFilter.match(try SCIMFilter.read(filter)) }
        let page: UserSearchPage
        do {
            page = try await users.search(realm: realm, match: match, offset: startIndex - 1, limit: count)
        } catch let error as UserSearchError {
            throw SCIMError(.badRequest, .invalidFilter, error.description)
        }
        let resources = page.users.map { SCIMUserResource.render($0, profile: page.profiles[$0.id] ?? UserProfile(), base: base(realm)) }
        return Listing(total: page.total, startIndex: startIndex, resources: resources)
    }

    func user(realm: String, id: String) async throws -> (User, JSONObject) {
        let user = try await existing(realm: realm, id: id)
        return (user, try await render(user, realm: realm))
    }

    func create(realm: String, body: JSONObject) async throws -> (User, JSONObject) {
        let input = try SCIMUserResource.read(body)
        try await refuseTakenName(input.userName, realm: realm, except: nil)
        let user = try await users.createUser(
            realm: realm, username: input.userName, password: input.password, enabled: input.active ?? true, profile: input.profile
        )
        return (user, SCIMUserResource.render(user, profile: input.profile, base: base(realm)))
    }

    /// `PUT`: the user becomes what the body says; `active` left out keeps the user as it is. Without `If-Match`, a
    /// concurrent change is overwritten, as the later of two `PUT`s would overwrite the earlier.
    func replace(realm: String, id: String, body: JSONObject, ifMatch: [String]) async throws -> (User, JSONObject) {
        let input = try SCIMUserResource.read(body)
        return try await againWhileStale(ifMatch) {
            let current = try await existing(realm: realm, id: id)
            let expected = try SCIMPrecondition.expectedRevision(ifMatch, current: current.revision)
            return try await write(input, over: current, expectedRevision: expected ?? current.revision)
        }
    }

    /// `PATCH`: the operations applied to the user as it is rendered, then written as a `PUT` of the result would be,
    /// only while the user is still at the revision read, so a concurrent change is never lost. With `If-Match`, a
    /// concurrent change is a 412. Without it (Entra ID and Okta send none), the operations are applied again to the
    /// user as it is now, as they would have been had they come a moment later.
    func patch(realm: String, id: String, body: JSONObject, ifMatch: [String]) async throws -> (User, JSONObject) {
        try await againWhileStale(ifMatch) {
            let (current, resource) = try await user(realm: realm, id: id)
            let expected = try SCIMPrecondition.expectedRevision(ifMatch, current: current.revision)
            let patched = try SCIMPatch.apply(body, to: resource)
            return try await write(try SCIMUserResource.read(patched), over: current, expectedRevision: expected ?? current.revision)
        }
    }

    /// How often a PATCH or PUT without `If-Match` is tried before a run of concurrent changes is answered 412: each
    /// attempt lost means another change was written, so N changes of one user at once all land within N attempts.
    static let patchAttempts = 8

    /// `attempt` (a read, then a write at the revision read) run again when the write finds the user changed since,
    /// up to `patchAttempts` times, unless the request named a version in `If-Match`: then the change is the 412.
    private func againWhileStale<R>(_ ifMatch: [String], _ attempt: () async throws -> R) async throws -> R {
        var attempts = 1
        while true {
            do {
                return try await attempt()
            } catch UserError.stale where ifMatch.isEmpty && attempts < Self.patchAttempts {
                attempts += 1
            }
        }
    }

    func delete(realm: String, id: String, ifMatch: [String]) async throws {
        let current = try await existing(realm: realm, id: id)
        let expected = try SCIMPrecondition.expectedRevision(ifMatch, current: current.revision)
        try await removal.delete(realm: realm, id: id, expectedRevision: expected)
    }

    private func write(_ input: SCIMUserInput, over current: User, expectedRevision: Int64) async throws -> (User, JSONObject) {
        let realm = current.realm
        // Checked before anything is written: a refused password must not leave the rest of the change applied.
        if let password = input.password { try UserService.checkPassword(password) }
        if input.userName != current.username { try await refuseTakenName(input.userName, realm: realm, except: current.id) }
        let change = UserChange(
            username: input.userName == current.username ? nil : input.userName,
            enabled: input.active.flatMap { $0 == current.enabled ? nil : $0 },
            profile: input.profile
        )
        var user = try await users.update(realm: realm, id: current.id, change: change, expectedRevision: expectedRevision)
        if let password = input.password { user = try await users.setPassword(realm: realm, id: user.id, password: password) }
        return (user, SCIMUserResource.render(user, profile: input.profile, base: base(realm)))
    }

    /// SCIM compares user names without regard to case (`userName` is `caseExact: false`): a directory that creates
    /// `BJensen` beside `bjensen` would then find two users where it expects one.
    private func refuseTakenName(_ userName: String, realm: String, except id: String?) async throws {
        let found = try await users.search(realm: realm, match: .compare(.username, .equal, .text(userName)), offset: 0, limit: 2)
        if found.users.contains(where: { $0.id != id }) {
            throw SCIMError(.conflict, .uniqueness, "realm '\(realm)' has a user named '\(userName)' already (user names are compared without regard to case)")
        }
    }

    private func existing(realm: String, id: String) async throws -> User {
        guard let user = try await users.user(realm: realm, id: id) else { throw SCIMError(.notFound, nil, "no user with id '\(id)' in realm '\(realm)'") }
        return user
    }

    private func render(_ user: User, realm: String) async throws -> JSONObject {
        let profile = try await users.profiles(realm: realm, userIds: [user.id])[user.id]
        return SCIMUserResource.render(user, profile: profile ?? UserProfile(), base: base(realm))
    }

    func base(_ realm: String) -> String { SCIMPaths.base(publicURL: publicURL, realm: realm) }
}

/// `If-Match` on SCIM resources (RFC 7644 §3.14): versions are weak tags, so they are compared weakly (RFC 9110
/// §8.8.3.2), `W/"3"` and `"3"` alike; `*` matches any existing user. A tag that does not match is a 412.
enum SCIMPrecondition {
    static func expectedRevision(_ values: [String], current: Int64) throws(SCIMError) -> Int64? {
        let parsed: IfMatch?
        do {
            parsed = try IfMatch.parse(values)
        } catch {
            throw SCIMError(.badRequest, .invalidVers, error.description)
        }
        switch parsed {
        case nil, .any?: return nil
        case .tags(let tags)?:
            guard tags.contains(where: { $0.opaque == String(current) }) else {
                throw SCIMError(.preconditionFailed, nil, "the user changed since that version: it is at \(SCIMVersion.tag(current)) now")
            }
            return current
        }
    }
}
