// A FIFO async lock around the SQLite connection transactions run on.
import Synchronization

/// A FIFO async lock around the SQLite session connection (the one transactions run on).
///
/// A transaction is a property of the connection: without the gate, a statement from an unrelated task
/// could land inside another task's BEGIN…COMMIT. A transaction holds the gate from BEGIN to COMMIT.
/// Waiting is not cancellable because every holder is short-lived.
final class SQLiteStatementGate: Sendable {
    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state -> Bool in
                if !state.held {
                    state.held = true
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if acquired { continuation.resume() }
        }
    }

    /// Hands the gate straight to the oldest waiter (it stays held), or frees it.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.nextWaiter < state.waiters.count else {
                state.held = false
                state.waiters.removeAll(keepingCapacity: true)
                state.nextWaiter = 0
                return nil
            }
            let waiter = state.waiters[state.nextWaiter]
            state.nextWaiter += 1
            return waiter
        }
        next?.resume()
    }

    func withGate<R>(_ body: () async throws -> R) async rethrows -> R {
        await acquire()
        defer { release() }
        return try await body()
    }
}
