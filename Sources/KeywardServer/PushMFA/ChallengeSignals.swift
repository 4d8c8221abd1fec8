import Foundation
import Synchronization

/// Wakes SSE streams when a challenge changes on this node, so a browser sees an approval at once instead of
/// at its next poll. Streams still re-read storage on a short interval: a change made on another node
/// (PostgreSQL deployments) is seen at the next tick.
public final class ChallengeSignals: Sendable {
    private let waiters = Mutex<[String: [Int: AsyncStream<PushChallenge?>.Continuation]]>([:])
    /// Tells apart the streams of one challenge; unique for the life of the process.
    private let nextStream = Atomic<Int>(0)
    /// Tells the other nodes (PostgreSQL NOTIFY); nil when this process is the only one.
    private let broadcast: (@Sendable (String) -> Void)?

    public init(broadcast: (@Sendable (String) -> Void)? = nil) {
        self.broadcast = broadcast
    }

    /// Signals every stream watching `challengeId`, here and on the other nodes.
    public func notify(_ challengeId: String) {
        wakeLocalStreams(challengeId, changed: nil)
        broadcast?(challengeId)
    }

    /// Signals every stream watching the challenge; this node's streams get the changed row itself and need not
    /// read it back.
    public func notify(_ changed: PushChallenge) {
        wakeLocalStreams(changed.id, changed: changed)
        broadcast?(changed.id)
    }

    /// Signals the streams of this node only (a notification from another node arrived: `changed` is nil).
    public func wakeLocalStreams(_ challengeId: String, changed: PushChallenge? = nil) {
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
