// Picking the push sender by a device's provider type, running it, and logging and counting the outcome.
import Foundation
import Logging

/// Picks the sender by the credential's pushProviderType (blank → "log"; unknown type → the `log` sender with a
/// warning), runs it, logs the outcome and reports it through `record(providerType, outcome)` (metrics hook).
///
/// `record` always gets the type of the sender that ran (or "log" when even that is missing), never the raw
/// requested type: that string comes from devices, and metric labels must stay a small fixed set.
public struct PushDispatcher: Sendable {
    public static let fallbackProviderType = "log"

    private let senders: [String: any PushSender]
    private let logger: Logger
    private let record: @Sendable (String, PushDeliveryOutcome) -> Void

    /// When two senders claim the same type, the first one wins.
    public init(senders: [any PushSender], logger: Logger, record: @escaping @Sendable (String, PushDeliveryOutcome) -> Void) {
        self.senders = Dictionary(senders.map { ($0.providerType, $0) }, uniquingKeysWith: { first, _ in first })
        self.logger = logger
        self.record = record
    }

    public func dispatch(_ message: PushMessage, providerType: String) async -> PushDeliveryOutcome {
        let requested = providerType.trimmingCharacters(in: .whitespacesAndNewlines)
        var metadata: Logger.Metadata = [
            "realm": .string(message.realm),
            "userId": .string(message.userId),
            "credentialId": .string(message.credentialId),
            "challengeId": .string(message.challengeId),
        ]

        let sender: (any PushSender)?
        if let named = senders[requested.isEmpty ? Self.fallbackProviderType : requested] {
            sender = named
        } else {
            metadata["requestedProviderType"] = .string(requested)
            logger.warning("unknown push provider type; using the log sender", metadata: metadata)
            sender = senders[Self.fallbackProviderType]
        }
        guard let sender else {
            // As in the original: without a usable sender the login still goes on; the app can poll.
            logger.warning("no push sender available; push skipped", metadata: metadata)
            record(Self.fallbackProviderType, .skipped)
            return .skipped
        }

        let outcome = await sender.send(message)
        metadata["providerType"] = .string(sender.providerType)
        metadata["outcome"] = .string(outcome.rawValue)
        switch outcome {
        case .delivered, .skipped: logger.debug("push dispatched", metadata: metadata)
        case .unregistered: logger.notice("push device token is no longer registered", metadata: metadata)
        case .failed: logger.warning("push delivery failed", metadata: metadata)
        }
        record(sender.providerType, outcome)
        return outcome
    }
}
