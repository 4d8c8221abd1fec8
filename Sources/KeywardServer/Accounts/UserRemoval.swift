/// Deleting a user with what is theirs: each other part's share first (`UserRemovalStep`: push phones, whose rows
/// do not reference the user, so nothing else would remove them; tokens at Apple, read before the identities go),
/// then the user, which ends its sessions and takes its linked identities with it, then what the steps left for
/// after (best effort, so a provider cannot hold a deletion up). One place for `keyward users delete`, the account
/// page and the admin API. The steps are read at each deletion, as every registry of the seam is (docs/
/// ARCHITECTURE.md §2.3): a reader built before a part plugs in its step still runs it.
struct UserRemoval: Sendable {
    let users: UserService
    let steps: @Sendable () -> [any UserRemovalStep]

    init(users: UserService, steps: @escaping @Sendable () -> [any UserRemovalStep]) {
        (self.users, self.steps) = (users, steps)
    }

    @discardableResult
    func delete(realm: String, username: String) async throws -> User {
        guard let user = try await users.user(realm: realm, username: username) else { throw UserError.notFound(username) }
        return try await delete(user)
    }

    /// Deletes the user `id` names, by its id from start to end (a rename meanwhile changes nothing); with
    /// `expectedRevision`, only if the user is still at it: the account is first disabled in one statement that
    /// compares the revision (`UserError.stale` when it does not match, with nothing done), then removed.
    @discardableResult
    func delete(realm: String, id: String, expectedRevision: Int64?) async throws -> User {
        guard var user = try await users.user(realm: realm, id: id) else { throw UserError.notFound(id) }
        if let expectedRevision {
            user = try await users.update(realm: realm, id: id, change: UserChange(enabled: false), expectedRevision: expectedRevision)
        }
        return try await delete(user)
    }

    private func delete(_ user: User) async throws -> User {
        let realm = user.realm
        let identities = try await users.identities(realm: realm, userId: user.id)
        var afterwards: [@Sendable () async -> Void] = []
        for step in steps() {
            if let after = try await step.removing(realm: realm, user: user, identities: identities) { afterwards.append(after) }
        }
        let deleted = try await users.delete(user)
        for after in afterwards { await after() }
        return deleted
    }
}
