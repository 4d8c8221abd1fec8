// The "log" push sender: one log line per push instead of a notification.
import Logging

/// `pushProviderType` "log" (and the fallback for blank or unknown types): one info line per push instead of a
/// notification. The confirm token is a bearer credential for approving the login, so it is only written for demo
/// realms, where scripts read it from the log.
public struct LogPushSender: PushSender {
    public let providerType = "log"
    private let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    public func send(_ message: PushMessage) async -> PushDeliveryOutcome {
        logger.info("push notification (log sender)", metadata: Self.metadata(for: message))
        return .delivered
    }

    /// Flat string values only, so a JSON log handler writes the line as one object.
    static func metadata(for message: PushMessage) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "realm": .string(message.realm),
            "username": .string(message.username),
            "userId": .string(message.userId),
            "credentialId": .string(message.credentialId),
            "challengeId": .string(message.challengeId),
            "pushProviderId": .string(message.pushProviderId),
            "version": "1",
            "type": "1",
        ]
        if let clientId = message.clientId {
            metadata["clientId"] = .string(clientId)
        }
        if message.demo {
            metadata["confirmToken"] = .string(message.confirmToken)
        }
        return metadata
    }
}
