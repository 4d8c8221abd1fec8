// What one login push carries, how it turned out, and what every push sender provides.
import Foundation
import Logging

/// What one login push carries. `confirmToken` is the realm-signed confirm JWT (credId, cid, typ 1, ver 1, iss,
/// iat, exp).
public struct PushMessage: Sendable {
    public var realm: String
    public var userId: String
    public var username: String
    /// The device-chosen credentialId (`credId`).
    public var credentialId: String
    public var challengeId: String
    public var clientId: String?
    /// FCM registration token / APNs device token; may be "" for log/none.
    public var pushProviderId: String
    public var confirmToken: String
    /// Demo realms: the log sender includes the confirm token in its line.
    public var demo: Bool
    /// The realm's notification text (push-MFA settings notificationTitle / notificationBody); nil: the sender's own.
    public var title: String?
    public var body: String?

    public init(
        realm: String, userId: String, username: String, credentialId: String, challengeId: String,
        clientId: String?, pushProviderId: String, confirmToken: String, demo: Bool
    ) {
        self.realm = realm
        self.userId = userId
        self.username = username
        self.credentialId = credentialId
        self.challengeId = challengeId
        self.clientId = clientId
        self.pushProviderId = pushProviderId
        self.confirmToken = confirmToken
        self.demo = demo
    }
}

public enum PushDeliveryOutcome: String, Sendable {
    /// The push service (or the log) accepted the message.
    case delivered
    /// Nothing was sent on purpose: the `none` sender, or no device token to send to.
    case skipped
    /// Sending failed; the sender has logged why. The login goes on (the user can still approve from the app).
    case failed
    /// The push service says the device token is gone; the credential's token should be marked invalid.
    case unregistered
}

public protocol PushSender: Sendable {
    /// The `pushProviderType` this sender serves ("log", "none", "fcm", "apns").
    var providerType: String { get }
    /// Never throws: failures are logged by the sender and reported as `.failed` / `.unregistered`.
    func send(_ message: PushMessage) async -> PushDeliveryOutcome
    /// Releases what the sender owns (an HTTP client of its own); safe to call more than once.
    func shutdown() async
}

extension PushSender {
    public func shutdown() async {}
}


extension PushMessage {
    /// What every sender's log lines about this push carry (never the confirm token).
    var logMetadata: Logger.Metadata {
        ["realm": .string(realm), "credentialId": .string(credentialId), "challengeId": .string(challengeId)]
    }
}
