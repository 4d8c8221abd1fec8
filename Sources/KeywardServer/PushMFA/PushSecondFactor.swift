// Push approval as the login flow's second factor, the account page's phones, and removing a user's phones.
import Foundation

/// Push approval as the login flow's second factor (`SecondFactor`): the push step when the user has a phone,
/// enrollment when the realm requires push MFA and the user has none; the account page's phones; and the phones
/// removed with their user (`UserRemovalStep`).
struct PushSecondFactor: SecondFactor, UserRemovalStep {
    let service: PushMFAService

    /// RFC 8176: the push approval is a second factor of any kind.
    static let amr = "mfa"

    var amr: String { Self.amr }

    func step(realm: String, userId: String, newUser: Bool) async throws -> SecondFactorStep {
        if newUser { return Self.withoutDevice(realm: realm, settings: try await service.settings(realm: realm)) }
        let stored = try await service.settingsAndDevices(realm: realm, userId: userId)
        // A person with devices goes to the push step even when none of them may approve (the realm requires an
        // attested device): the step says so. Dropping to the password alone would weaken their account.
        guard stored.devices.isEmpty else { return .verify(next: PageURLs.pushWait(realm)) }
        return Self.withoutDevice(realm: realm, settings: stored.settings)
    }

    /// A user without a phone: enrollment when the realm requires push MFA, otherwise not asked.
    static func withoutDevice(realm: String, settings: PushMFASettings) -> SecondFactorStep {
        settings.requirePushMfa ? .enroll(next: PageURLs.enroll(realm)) : .skip
    }

    /// Cancels the push the session had pending; if the cancel fails, the push simply expires.
    func abandon(_ session: BrowserSession) async {
        guard let pending = session.challengeId else { return }
        try? await service.cancelLogin(challengeId: pending, sessionId: session.idHash)
    }

    func accountSection(realm: String, user: User, session: BrowserSession) async throws -> [String: Any] {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        // A credential on a registered device that is this person's shows in that device's row (Devices' list): one
        // list, each device once. On a device someone else signed in on since, it stays here, where it can be removed.
        var shown: [PushCredential] = []
        for credential in try await service.devices(realm: realm, userId: user.id) {
            if let device = try await service.deviceKeys.liveDevice(of: credential, realm: realm), device.userId == user.id { continue }
            shown.append(credential)
        }
        let devices: [[String: Any]] = shown.map { device in
            [
                "label": device.deviceLabel, "type": device.deviceType, "created": formatter.string(from: device.createdAt),
                "lastUsed": device.lastUsedAt.map(formatter.string(from:)) ?? "never", "csrf": session.csrfToken,
                "removeAction": PageURLs.account(realm) + "/devices/\(device.id)/remove",
            ]
        }
        return ["devices": devices, "hasDevices": !devices.isEmpty, "enrollURL": PageURLs.enroll(realm)]
    }

    /// The user's phones go first: their rows do not reference the user, so nothing else would remove them.
    func removing(realm: String, user: User, identities: [ExternalIdentity]) async throws -> (@Sendable () async -> Void)? {
        for device in try await service.devices(realm: realm, userId: user.id) {
            try await service.removeDevice(realm: realm, userId: user.id, credentialId: device.id)
        }
        return nil
    }
}
