import Foundation
import Synchronization

/// Wakes this node's SSE streams when a challenge changes, so a browser sees an approval at once instead of at
/// its next poll. Changes made on other nodes arrive through `ChallengeNotificationListener` (PostgreSQL); streams
/// also re-read storage on a short interval, so a missed signal only costs latency.
public final class ChallengeSignals: Sendable {
    private let waiters = Mutex<[String: [Int: AsyncStream<PushChallenge?>.Continuation]]>([:])
    /// Tells apart the streams of one challenge; unique for the life of the process.
    private let nextStream = Atomic<Int>(0)

    public init() {}

    /// Wakes every stream watching `challengeId`; they read it back.
    public func notify(_ challengeId: String) {
        wake(challengeId, changed: nil)
    }

    /// Wakes every stream watching the challenge with the changed row itself: they need not read it back.
    public func notify(_ changed: PushChallenge) {
        wake(changed.id, changed: changed)
    }

    private func wake(_ challengeId: String, changed: PushChallenge?) {
        let continuations = waiters.withLock { $0[challengeId].map { Array($0.values) } ?? [] }
        for continuation in continuations { continuation.yield(changed) }
    }

    /// A stream that yields whenever `challengeId` changes on this node, and at least every `tick` (so the
    /// reader re-checks storage for changes made elsewhere). Each element is the changed challenge when this node
    /// changed it, nil when the reader must read it. It ends when the reader stops iterating.
    public func changes(of challengeId: String, tick: Duration) -> AsyncStream<PushChallenge?> {
        let (stream, continuation) = AsyncStream<PushChallenge?>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let token = nextStream.wrappingAdd(1, ordering: .relaxed).oldValue
        waiters.withLock { $0[challengeId, default: [:]][token] = continuation }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                continuation.yield(nil)
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
