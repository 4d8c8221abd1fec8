// The admin API's view of what a user holds in other parts: phones enrolled for push, registered devices, passkeys.
import Foundation
import Hummingbird

/// `/admin/realms/{realm}/users/{id}/push-devices`, `…/devices` and `…/passkeys` (`users:read`; removing one,
/// `users:write`). Removing a registered device ends everything its key holds, as `keyward devices remove` does; a
/// passkey that is the person's last way in is kept (`last_way_in`), as on the account page.
struct AdminUserHoldingsRoutes {
    let users: UserService
    let pushMFA: PushMFAService
    let apps: DeviceAppService
    let passkeys: PasskeyService

    func register(on realm: RouterGroup<KeywardRequestContext>) {
        realm.get("users/:id/push-devices") { _, context in
            try context.admin.require(.usersRead)
            let user = try await existing(context)
            let devices = try await pushMFA.devices(realm: user.realm, userId: user.id)
            return AdminJSON.whole(devices, AdminPushDeviceBody.init)
        }
        realm.delete("users/:id/push-devices/:credentialId") { _, context in
            try context.admin.require(.usersWrite)
            let user = try await existing(context)
            let credential = context.decodedParameter("credentialId")
            guard try await pushMFA.devices(realm: user.realm, userId: user.id).contains(where: { $0.id == credential }) else {
                throw AdminProblem.notFound("user '\(user.username)' has no push device '\(credential.prefix(64))'")
            }
            try await pushMFA.removeDevice(realm: user.realm, userId: user.id, credentialId: credential)
            return Response(status: .noContent)
        }
        realm.get("users/:id/devices") { _, context in
            try context.admin.require(.usersRead)
            let user = try await existing(context)
            let devices = try await apps.devices(realm: user.realm, userId: user.id)
            return AdminJSON.whole(devices, AdminDeviceBody.init)
        }
        realm.get("users/:id/passkeys") { _, context in
            try context.admin.require(.usersRead)
            let user = try await existing(context)
            let held = try await passkeys.passkeys(realm: user.realm, userId: user.id)
            return AdminJSON.whole(held, AdminPasskeyBody.init)
        }
        realm.delete("users/:id/passkeys/:credentialId") { _, context in
            try context.admin.require(.usersWrite)
            let user = try await existing(context)
            let credential = context.decodedParameter("credentialId")
            switch try await passkeys.removeUnlessLastWayIn(realm: user.realm, userId: user.id, credentialId: credential) {
            case .removed: return Response(status: .noContent)
            case .notFound: throw AdminProblem.notFound("user '\(user.username)' has no passkey '\(credential.prefix(64))'")
            case .lastWayIn:
                throw AdminProblem(.conflict, "last_way_in", "this passkey is the user's last way in: give them a password or another way first")
            }
        }
    }

    private func existing(_ context: KeywardRequestContext) async throws -> User { try await users.pathUser(context) }
}

struct AdminPushDeviceBody: Encodable {
    let id: String
    let deviceId: String
    let deviceType: String
    let deviceLabel: String
    let pushProviderType: String
    let pushTokenValid: Bool
    /// Set when push was turned on from a registered device (its app and device id).
    let registeredAppId: String?
    let registeredDeviceId: String?
    let createdAt: String
    let lastUsedAt: String?

    init(_ credential: PushCredential) {
        (id, deviceId, deviceType, deviceLabel) = (credential.id, credential.deviceId, credential.deviceType, credential.deviceLabel)
        (pushProviderType, pushTokenValid) = (credential.effectivePushProviderType, credential.pushTokenValid)
        (registeredAppId, registeredDeviceId) = (credential.registeredAppId, credential.registeredDeviceId)
        (createdAt, lastUsedAt) = (credential.createdAt.formatted(.iso8601), credential.lastUsedAt?.formatted(.iso8601))
    }
}

struct AdminPasskeyBody: Encodable {
    let credentialId: String
    let name: String
    let kind: String
    let aaguid: String
    let attestationTrusted: Bool
    let userVerified: Bool
    let createdAt: String
    let lastUsedAt: String?
    let possiblyClonedAt: String?

    init(_ passkey: Passkey) {
        (credentialId, name, kind, aaguid) = (passkey.credentialId, passkey.name, passkey.kind, passkey.aaguid)
        (attestationTrusted, userVerified) = (passkey.attestationTrusted, passkey.userVerified)
        (createdAt, lastUsedAt) = (passkey.createdAt.formatted(.iso8601), passkey.lastUsedAt?.formatted(.iso8601))
        possiblyClonedAt = passkey.possiblyClonedAt?.formatted(.iso8601)
    }
}
