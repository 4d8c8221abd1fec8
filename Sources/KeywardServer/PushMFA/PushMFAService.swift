// The push-MFA logic's entry point, with its settings, devices, challenges and the push seam.
import Foundation
import KeywardJOSE
import Logging

/// Sends a login push to one device. The Push part implements it over its senders; returning
/// `true` means the push service reported the device token gone, so the credential is marked.
public protocol ChallengePusher: Sendable {
    /// `title`/`body`: the realm's notification text, nil for the sender's default.
    func push(realm: Realm, user: User, credential: PushCredential, challenge: PushChallenge, confirmToken: String, title: String?, body: String?) async -> Bool
}

/// The push-MFA logic: enrollment, login challenges, device responses, device management.
/// Framework-free; routes and pages call it, tests drive it with an injected clock.
public struct PushMFAService: Sendable {
    let realms: RealmService
    let users: UserService
    let credentials: any PushCredentialStore
    let challenges: any PushChallengeStore
    let state: any PushMFAStateStore
    let tokens: PushMFATokens
    let authenticator: DeviceAuthenticator
    let pusher: any ChallengePusher
    /// Login pushes run in the background, bounded (`push.maxConcurrentSends`).
    let pushTasks: BoundedTasks
    let signals: ChallengeSignals
    let audit: AuditLog
    let clock: any KeywardClock
    let logger: Logger
    /// The registered devices push credentials may live on (Core's seam, filled by the Devices part).
    let deviceKeys: DeviceKeys

    /// The realm's settings, or the defaults when none were saved.
    public func settings(realm: String) async throws -> PushMFASettings {
        try await state.settings(realm: realm) ?? PushMFASettings()
    }

    public func saveSettings(_ settings: PushMFASettings, realm: String) async throws {
        try await state.saveSettings(settings, realm: realm, now: clock.now())
    }

    public func devices(realm: String, userId: String) async throws -> [PushCredential] {
        try await credentials.credentials(realm: realm, userId: userId)
    }

    /// The realm's settings (defaults when none were saved) and the user's devices, read in one statement.
    public func settingsAndDevices(realm: String, userId: String) async throws -> (settings: PushMFASettings, devices: [PushCredential]) {
        let (settings, devices) = try await credentials.settingsAndCredentials(realm: realm, userId: userId)
        return (settings ?? PushMFASettings(), devices)
    }

    /// Removes one of the user's devices (account page); its pending login challenges can no longer be answered.
    public func removeDevice(realm: String, userId: String, credentialId id: String) async throws {
        try await credentials.deleteCredential(realm: realm, userId: userId, id: id)
        await audit.record(.credentialRemoved, realm: realm, userId: userId, details: ["credential": id])
    }

    /// The challenge as any reader must see it (lazy expiry applied).
    public func challenge(id: String) async throws -> PushChallenge? {
        try await challenges.challenge(id: id, now: clock.now())
    }

    /// Does `secret` open the SSE stream of `challenge`? Constant time over the hashes.
    public static func watchSecretMatches(_ secret: String, _ challenge: PushChallenge) -> Bool {
        ConstantTime.equal(PushMFATokens.secretHash(secret), challenge.watchSecretHash)
    }

    /// Runs a storage call; any storage failure becomes the original's `unknown_error` (503 here: it is transient).
    func stored<T>(_ body: () async throws -> T) async throws(PushMFAError) -> T {
        do {
            return try await body()
        } catch let error as PushMFAError {
            throw error
        } catch {
            logger.error("push-MFA storage failure", metadata: ["error": "\(error)"])
            throw PushMFAError.unavailable
        }
    }
}

extension PushMFAService {
    /// The same service over another challenge store (tests put an instrumented store in front of the real one).
    func replacingChallenges(with store: any PushChallengeStore) -> PushMFAService {
        PushMFAService(
            realms: realms, users: users, credentials: credentials, challenges: store, state: state, tokens: tokens,
            authenticator: authenticator, pusher: pusher, pushTasks: pushTasks, signals: signals, audit: audit, clock: clock, logger: logger,
            deviceKeys: deviceKeys
        )
    }
}
