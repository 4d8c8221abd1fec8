import Foundation
import Logging
import ServiceLifecycle

/// Cross-node challenge signals over PostgreSQL LISTEN/NOTIFY: a challenge resolved through one node wakes the
/// SSE streams following it on every other node at once. Streams still poll storage, so a lost notification
/// (reconnect, restart) only costs latency, never correctness.
struct ChallengeNotificationListener: Service {
    static let channel = "keyward_push_challenges"

    let database: KeywardDatabase
    let signals: ChallengeSignals
    let logger: Logger

    /// The broadcast side, for `ChallengeSignals(broadcast:)`.
    static func broadcaster(database: KeywardDatabase, logger: Logger) -> (@Sendable (String) -> Void)? {
        guard database.isShared else { return nil }
        return { challengeId in
            Task {
                do {
                    try await database.notify(channel: channel, payload: challengeId)
                } catch {
                    logger.warning("challenge notification not sent; other nodes see the change at their next poll", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    func run() async throws {
        guard database.isShared else { return }
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                do {
                    try await database.listen(channel: Self.channel) { [signals] challengeId in signals.wakeLocalStreams(challengeId) }
                } catch {
                    guard !Task.isCancelled else { return }
                    logger.warning("challenge notifications interrupted; reconnecting", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
