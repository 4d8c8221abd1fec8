// The confirm token and same-device link of a pending login, for the waiting page and the push.
import Foundation

extension PushMFAService {
    /// A pending login challenge's confirm token and same-device "Open app" link, signed afresh for a reloaded
    /// waiting page (demo realms show them, as the original's page does; docs/PUSH-MFA-PROTOCOL.md §6.1). Both are for the device the
    /// challenge is bound to, or the newest one when it goes to all of them. Nil when the user has no device left.
    public func confirmLinks(for challenge: PushChallenge) async throws(PushMFAError) -> (confirmToken: String, sameDeviceLink: String)? {
        let settings = try await stored { try await self.settings(realm: challenge.realm) }
        let devices = try await stored { try await credentials.credentials(realm: challenge.realm, userId: challenge.userId) }
        guard let device = devices.first(where: { $0.id == challenge.credentialId }) ?? devices.max(by: { $0.createdAt < $1.createdAt }) else {
            return nil
        }
        let now = clock.now()
        let token = try await stored { try await tokens.confirmToken(realm: challenge.realm, credential: device, challenge: challenge, now: now) }
        let link = try await sameDeviceLink(challenge: challenge, device: device, pushedToken: token, settings: settings, now: now)
        return (token, link)
    }

    /// The "open app" link for a browser on the phone itself. Only this variant may carry the answer, and only when
    /// the realm says so; without the answer its claims are those of the token pushed to `device`, which serves.
    func sameDeviceLink(
        challenge: PushChallenge, device: PushCredential, pushedToken: String, settings: PushMFASettings, now: Date
    ) async throws(PushMFAError) -> String {
        let withAnswer = settings.sameDeviceIncludeUserVerification && challenge.userVerification.expectedValue != nil
        let token = if !withAnswer { pushedToken } else {
            try await stored {
                try await tokens.confirmToken(realm: challenge.realm, credential: device, challenge: challenge, now: now, includeUserVerification: true)
            }
        }
        return Self.appLink(settings.loginAppUniversalLink, parameter: "token", value: token)
    }
}
