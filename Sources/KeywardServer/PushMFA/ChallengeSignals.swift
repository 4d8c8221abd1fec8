// Waking this node's SSE streams when a challenge changes, so browsers see approvals at once.
import Foundation
import Synchronization

/// What an SSE stream learns when it is woken.
public enum ChallengeChange: Sendable {
    /// This node changed the challenge: the row as written.
    case changed(PushChallenge)
    /// The database announced the challenge's new status, whichever node or command changed it. The other fields a
    /// stream sends (id, expiry, client) never change, so the status is all it needs.
    case status(PushChallenge.Status)
    /// The challenge was deleted (replaced by a resend, or cleaned up).
    case removed
    /// It may have changed: read it back (a poll tick, or a notification that names no status).
    case unknown
}

/// Wakes this node's SSE streams when a challenge changes, so a browser sees an approval at once instead of at
/// its next poll. Changes made on other nodes arrive through `ChallengeNotificationListener` (PostgreSQL); streams
/// also re-read storage on a short interval, so a missed signal only costs latency.
public final class ChallengeSignals: Sendable {
    private let waiters = Mutex<[String: [Int: AsyncStream<ChallengeChange>.Continuation]]>([:])
    /// Tells apart the streams of one challenge; unique for the life of the process.
    private let nextStream = Atomic<Int>(0)

    public init() {}

    /// Wakes every stream watching `challengeId`; they read it back.
    public func notify(_ challengeId: String) {
        notify(challengeId, .unknown)
    }

    /// Wakes every stream watching the challenge with the changed row itself: they need not read it back.
    public func notify(_ changed: PushChallenge) {
        notify(changed.id, .changed(changed))
    }

    public func notify(_ challengeId: String, _ change: ChallengeChange) {
        let continuations = waiters.withLock { $0[challengeId].map { Array($0.values) } ?? [] }
        for continuation in continuations { continuation.yield(change) }
    }

    /// A stream that yields whenever `challengeId` changes, and `.unknown` at least every `tick` (so the reader
    /// re-checks storage for changes no signal reported). It ends when the reader stops iterating.
    public func changes(of challengeId: String, tick: Duration) -> AsyncStream<ChallengeChange> {
        let (stream, continuation) = AsyncStream<ChallengeChange>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let token = nextStream.wrappingAdd(1, ordering: .relaxed).oldValue
        waiters.withLock { $0[challengeId, default: [:]][token] = continuation }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                continuation.yield(.unknown)
            }
        }
        continuation.onTermination = { [weak self] _ in
            ticker.cancel()
            self?.waiters.withLock { table in
                table[challengeId]?[token] = nil
                if table[challengeId]?.isEmpty == true { table[challengeId] = nil }
            }
        }
        return stream
    }

    func isWatched(_ challengeId: String) -> Bool { waiters.withLock { $0[challengeId]?.isEmpty == false } }
}
