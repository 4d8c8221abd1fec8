/// Deleting a user with what is theirs: push devices first (their rows do not reference the user, so nothing else
/// would remove them), then the user, which ends its sessions and takes its linked identities with it, then the
/// user's Apple tokens at Apple (read before the identities go; best effort, so Apple cannot hold a deletion up).
/// One place for `keyward users delete` and the account page.
struct UserRemoval: Sendable {
    let users: UserService
    let pushMFA: PushMFAService
    let appleRevocation: AppleTokenRevocation

    @discardableResult
    func delete(realm: String, username: String) async throws -> User {
        guard let user = try await users.user(realm: realm, username: username) else { throw UserError.notFound(username) }
        for device in try await pushMFA.devices(realm: realm, userId: user.id) {
            try await pushMFA.removeDevice(realm: realm, userId: user.id, credentialId: device.id)
        }
        let identities = try await users.identities(realm: realm, userId: user.id)
        let deleted = try await users.delete(realm: realm, username: username)
        await appleRevocation.revoke(identities)
        return deleted
    }
}
