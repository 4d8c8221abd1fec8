// Listening for PostgreSQL challenge notifications so a change on one node wakes streams on every node.
import Foundation
import Logging
import ServiceLifecycle

/// Cross-node challenge signals over PostgreSQL LISTEN/NOTIFY: a challenge changed through one node wakes the
/// SSE streams following it on every node at once. The database sends the notifications itself, from a trigger
/// on every status change and deletion (`ChallengeNotifySchemaMigration`, `ChallengeNotifyStatusSchemaMigration`).
/// Streams still poll storage, so a lost notification (reconnect, restart) only costs latency, never correctness.
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
                    try await database.listen(channel: Self.channel) { [signals] payload in
                        let (challengeId, change) = Self.change(announcedBy: payload)
                        signals.notify(challengeId, change)
                    }
                } catch {
                    guard !Task.isCancelled else { return }
                    logger.warning("challenge notifications interrupted; reconnecting", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// The trigger's payload: `<challenge id> <new status>`, or `<challenge id> DELETED`. A bare id (sent by the
    /// trigger before migration 6) or a status this version does not know makes the streams read the challenge.
    static func change(announcedBy payload: String) -> (challengeId: String, change: ChallengeChange) {
        let parts = payload.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
        let challengeId = String(parts[0])
        guard parts.count == 2 else { return (challengeId, .unknown) }
        if parts[1] == "DELETED" { return (challengeId, .removed) }
        return (challengeId, PushChallenge.Status(rawValue: String(parts[1])).map(ChallengeChange.status) ?? .unknown)
    }
}
