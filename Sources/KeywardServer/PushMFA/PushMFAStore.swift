// Push MFA's persistence: credentials, challenges, enrollment requests, settings and wait state.
import Foundation

/// How an attempt to move a challenge out of PENDING ended.
public enum ChallengeResolution: Sendable, Equatable {
    /// This call moved it; exactly one of several racing callers gets this.
    case applied(PushChallenge)
    /// It had already left PENDING (or expired); the current record.
    case alreadyFinal(PushChallenge)
    case notFound
}

/// A capability handle for fetching an enrollment token by `request_uri`.
public struct EnrollmentRequest: Sendable, Equatable {
    public var handle: String
    public var realm: String
    public var userId: String
    public var challengeId: String
    public var expiresAt: Date
}

/// Wait-challenge rate-limit state of one user.
public struct WaitChallengeState: Sendable, Equatable {
    public var challengeCount: Int
    public var firstAt: Date
    public var lastAt: Date
}

public protocol PushCredentialStore: Sendable {
    /// Inserts the credential, replacing any credential of the same user with the same `deviceId`
    /// (a re-enrolled device keeps one record). One transaction with the enrollment challenge's resolution:
    /// the challenge must still be PENDING and unexpired, else nothing is written.
    func completeEnrollment(challengeId: String, credential: PushCredential, now: Date) async throws -> ChallengeResolution
    /// Stores a credential made on a registered device's own key, replacing any of the same user with the same
    /// `deviceId`, in one transaction; false (nothing written) when the user has `maxDevices` other devices already.
    func putRegisteredDeviceCredential(_ credential: PushCredential, maxDevices: Int) async throws -> Bool
    func credentials(realm: String, userId: String) async throws -> [PushCredential]
    /// The realm's stored push-MFA settings (nil: defaults) and the user's devices, oldest first, read together
    /// (every login does this).
    func settingsAndCredentials(realm: String, userId: String) async throws -> (settings: PushMFASettings?, credentials: [PushCredential])
    /// The user's device `deviceId`, if enrolled (device authentication, every request).
    func credential(realm: String, userId: String, deviceId: String) async throws -> PushCredential?
    func credential(realm: String, id: String) async throws -> PushCredential?
    func updatePushProvider(realm: String, id: String, providerId: String, providerType: String) async throws
    func markPushTokenInvalid(realm: String, id: String) async throws
    func replaceKey(realm: String, id: String, publicKeyJWK: String, createdAt: Date) async throws
    func touch(realm: String, id: String, at: Date) async throws
    /// Throws `.notFound` when the user has no such credential.
    func deleteCredential(realm: String, userId: String, id: String) async throws
    /// Deletes the credentials made on registered device `deviceId` of app `appId`, and returns them.
    func deleteRegisteredDeviceCredentials(realm: String, appId: String, deviceId: String) async throws -> [PushCredential]
    /// Puts the registered device's new key on the credentials made on it.
    func rekeyRegisteredDeviceCredentials(realm: String, appId: String, deviceId: String, publicKeyJWK: String) async throws
}

public protocol PushChallengeStore: Sendable {
    func insertChallenge(_ challenge: PushChallenge) async throws
    /// Creates a login challenge under a per-user lock (one transaction): first deletes the user's pending login
    /// challenges of the same browser session (resend replaces them) and returns their ids, then counts the
    /// user's other pending login challenges; when they reach `maxPending`, inserts nothing and returns nil.
    func createLoginChallenge(_ challenge: PushChallenge, maxPending: Int, now: Date) async throws -> [String]?
    /// The stored record, with a PENDING record past its expiry rewritten as EXPIRED first (lazy expiry).
    func challenge(id: String, now: Date) async throws -> PushChallenge?
    /// PENDING, unexpired challenges of one kind for a user, oldest first.
    func pendingChallenges(realm: String, userId: String, kind: PushChallenge.Kind, now: Date) async throws -> [PushChallenge]
    /// One conditional UPDATE … RETURNING: moves a PENDING, unexpired challenge to `status`. An approved login
    /// also clears the user's wait-challenge state (rate limiting starts over).
    func resolve(id: String, to status: PushChallenge.Status, now: Date) async throws -> ChallengeResolution
    /// Counts a wrong user-verification answer; the answer that reaches `limit` resolves it DENIED in the same
    /// statement. Returns the challenge after the update (nil when it was no longer PENDING).
    func recordVerificationFailure(id: String, limit: Int, now: Date) async throws -> PushChallenge?
    /// Resolves every PENDING challenge of the user (both kinds) to `status`; returns them.
    func resolveAllPending(realm: String, userId: String, to status: PushChallenge.Status, now: Date) async throws -> [PushChallenge]
    func deleteChallenge(id: String) async throws
    /// Marks PENDING challenges past expiry EXPIRED, and deletes final ones that ended before `retainUntil`.
    func sweepChallenges(now: Date, deleteEndedBefore: Date) async throws -> (expired: Int, deleted: Int)
    func insertEnrollmentRequest(_ request: EnrollmentRequest) async throws
    func enrollmentRequest(handle: String, now: Date) async throws -> EnrollmentRequest?
    /// The unexpired handle of an enrollment challenge that lives longest, if any.
    func enrollmentRequest(challengeId: String, now: Date) async throws -> EnrollmentRequest?
    func deleteEnrollmentRequest(handle: String) async throws
}

public protocol PushMFAStateStore: Sendable {
    func settings(realm: String) async throws -> PushMFASettings?
    func saveSettings(_ settings: PushMFASettings, realm: String, now: Date) async throws
    func waitState(realm: String, userId: String) async throws -> WaitChallengeState?
    func saveWaitState(_ state: WaitChallengeState, realm: String, userId: String) async throws
}
