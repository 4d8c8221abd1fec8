// Running fire-and-forget work with bounded concurrency and a bounded queue, dropping the rest.
import Synchronization

/// Runs fire-and-forget work with at most `maxRunning` at a time and at most `maxWaiting` queued behind them;
/// work beyond that is refused, so a slow downstream service (a push provider that stops answering) cannot make
/// the server pile up tasks and memory without bound.
final class BoundedTasks: Sendable {
    typealias Work = @Sendable () async -> Void

    private struct State: Sendable {
        var running = 0
        var waiting: [Work] = []
        var head = 0
    }

    let maxRunning: Int
    let maxWaiting: Int
    private let state = Mutex(State())
    /// Called for each dropped work (a metric).
    private let onDrop: @Sendable () -> Void

    init(maxRunning: Int, maxWaiting: Int, onDrop: @escaping @Sendable () -> Void = {}) {
        precondition(maxRunning > 0 && maxWaiting >= 0)
        self.maxRunning = maxRunning
        self.maxWaiting = maxWaiting
        self.onDrop = onDrop
    }

    /// Starts `work` now, or queues it; false when both are full and the work was dropped.
    @discardableResult
    func submit(_ work: @escaping Work) -> Bool {
        enum Decision { case start, queued, dropped }
        let decision = state.withLock { state -> Decision in
            if state.running < maxRunning {
                state.running += 1
                return .start
            }
            guard state.waiting.count - state.head < maxWaiting else { return .dropped }
            state.waiting.append(work)
            return .queued
        }
        switch decision {
        case .start: start(work)
        case .queued: return true
        case .dropped:
            onDrop()
            return false
        }
        return true
    }

    /// Work running or queued now (for tests and metrics).
    var load: (running: Int, waiting: Int) {
        state.withLock { ($0.running, $0.waiting.count - $0.head) }
    }

    private func start(_ work: @escaping Work) {
        Task {
            await work()
            finished()
        }
    }

    /// The slot of finished work goes to the oldest queued work, or is freed.
    private func finished() {
        let next = state.withLock { state -> Work? in
            guard state.head < state.waiting.count else {
                state.running -= 1
                return nil
            }
            let work = state.waiting[state.head]
            state.head += 1
            if state.head >= 64, state.head * 2 >= state.waiting.count {
                state.waiting.removeFirst(state.head)
                state.head = 0
            }
            return work
        }
        if let next { start(next) }
    }
}
