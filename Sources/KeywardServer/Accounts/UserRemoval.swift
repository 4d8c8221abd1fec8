/// Deleting a user with what is theirs: each other part's share first (`UserRemovalStep`: push phones, whose rows
/// do not reference the user, so nothing else would remove them; tokens at Apple, read before the identities go),
/// then the user, which ends its sessions and takes its linked identities with it, then what the steps left for
/// after (best effort, so a provider cannot hold a deletion up). One place for `keyward users delete` and the
/// account page.
struct UserRemoval: Sendable {
    let users: UserService
    let steps: [any UserRemovalStep]

    @discardableResult
    func delete(realm: String, username: String) async throws -> User {
        guard let user = try await users.user(realm: realm, username: username) else { throw UserError.notFound(username) }
        let identities = try await users.identities(realm: realm, userId: user.id)
        var afterwards: [@Sendable () async -> Void] = []
        for step in steps {
            if let after = try await step.removing(realm: realm, user: user, identities: identities) { afterwards.append(after) }
        }
        let deleted = try await users.delete(realm: realm, username: username)
        for after in afterwards { await after() }
        return deleted
    }
}
