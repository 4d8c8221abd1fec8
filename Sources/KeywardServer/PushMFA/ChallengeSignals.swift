import Foundation
import Synchronization

/// Wakes SSE streams when a challenge changes on this node, so a browser sees an approval at once instead of
/// at its next poll. Streams still re-read storage on a short interval: a change made on another node
/// (PostgreSQL deployments) is seen at the next tick.
public final class ChallengeSignals: Sendable {
    private let waiters = Mutex<[String: [Int: AsyncStream<Void>.Continuation]]>([:])
    /// Tells apart the streams of one challenge; unique for the life of the process.
    private let nextStream = Atomic<Int>(0)
    /// Tells the other nodes (PostgreSQL NOTIFY); nil when this process is the only one.
    private let broadcast: (@Sendable (String) -> Void)?

    public init(broadcast: (@Sendable (String) -> Void)? = nil) {
        self.broadcast = broadcast
    }

    /// Signals every stream watching `challengeId`, here and on the other nodes.
    public func notify(_ challengeId: String) {
        wakeLocalStreams(challengeId)
        broadcast?(challengeId)
    }

    /// Signals the streams of this node only (a notification from another node arrived).
    public func wakeLocalStreams(_ challengeId: String) {
        let continuations = waiters.withLock { $0[challengeId].map { Array($0.values) } ?? [] }
        for continuation in continuations { continuation.yield() }
    }

    /// A stream that yields whenever `challengeId` changes on this node, and at least every `tick` (so the
    /// reader re-checks storage for changes made elsewhere). It ends when the reader stops iterating.
    public func changes(of challengeId: String, tick: Duration) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let token = nextStream.wrappingAdd(1, ordering: .relaxed).oldValue
        waiters.withLock { $0[challengeId, default: [:]][token] = continuation }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                continuation.yield()
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
