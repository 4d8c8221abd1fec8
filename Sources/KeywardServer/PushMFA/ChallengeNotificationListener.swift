import Foundation
import Logging
import ServiceLifecycle

/// Cross-node challenge signals over PostgreSQL LISTEN/NOTIFY: a challenge changed through one node wakes the
/// SSE streams following it on every node at once. The database sends the notifications itself, from a trigger
/// on every status change and deletion (`ChallengeNotifySchemaMigration`). Streams still poll storage, so a lost
/// notification (reconnect, restart) only costs latency, never correctness.
struct ChallengeNotificationListener: Service {
    /// Named in the trigger's function too.
    static let channel = "keyward_push_challenges"

    let database: KeywardDatabase
    let signals: ChallengeSignals
    let logger: Logger

    func run() async throws {
        guard database.isShared else { return }
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                do {
                    try await database.listen(channel: Self.channel) { [signals] challengeId in signals.notify(challengeId) }
                } catch {
                    guard !Task.isCancelled else { return }
                    logger.warning("challenge notifications interrupted; reconnecting", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
