import Synchronization

/// Writes items in groups. A caller whose item arrives while a write is in flight queues it; when that write
/// ends, the first queued caller writes everything queued so far in one go. Every caller returns once the write
/// holding its item has ended, with that write's outcome for its item, so nothing is acknowledged before it is
/// written; alone, an item is written at once. Under load, N concurrent callers cost a few writes instead of N.
final class GroupCommit<Item: Sendable, Outcome: Sendable>: Sendable {
    private typealias Waiter = (item: Item, caller: CheckedContinuation<Turn, Never>)

    private enum Turn: Sendable {
        /// Write `own` and the items of `others`, tell `others` their outcomes, then hand over.
        case write(own: Item, others: [Waiter])
        /// Another caller wrote this caller's item.
        case written(Outcome)
    }

    private struct State: Sendable {
        var writing = false
        var queued: [Waiter] = []
    }

    private let state = Mutex(State())
    private let maxGroup: Int
    private let write: @Sendable ([Item]) async -> [Outcome]

    /// `write` receives 1 to `maxGroup` items and answers one outcome per item, in order; it must not throw (a
    /// failure is an outcome).
    init(maxGroup: Int, write: @escaping @Sendable ([Item]) async -> [Outcome]) {
        precondition(maxGroup > 0)
        self.maxGroup = maxGroup
        self.write = write
    }

    func submit(_ item: Item) async -> Outcome {
        let turn = await withCheckedContinuation { (caller: CheckedContinuation<Turn, Never>) in
            let leads = state.withLock { state in
                guard !state.writing else {
                    state.queued.append((item, caller))
                    return false
                }
                state.writing = true
                return true
            }
            if leads { caller.resume(returning: .write(own: item, others: [])) }
        }
        switch turn {
        case .written(let outcome):
            return outcome
        case .write(let own, let others):
            let outcomes = await write([own] + others.map(\.item))
            precondition(outcomes.count == others.count + 1, "a group write answers one outcome per item")
            for (waiter, outcome) in zip(others, outcomes.dropFirst()) { waiter.caller.resume(returning: .written(outcome)) }
            handOver()
            return outcomes[0]
        }
    }

    /// Callers waiting behind the write in flight (tests wait on it instead of sleeping).
    var queuedCount: Int { state.withLock { $0.queued.count } }

    /// Ends this caller's turn: the first queued caller writes the next group, or nobody is writing any more.
    private func handOver() {
        let next = state.withLock { state -> [Waiter] in
            let group = Array(state.queued.prefix(maxGroup))
            state.queued.removeFirst(group.count)
            if group.isEmpty { state.writing = false }
            return group
        }
        guard let writer = next.first else { return }
        writer.caller.resume(returning: .write(own: writer.item, others: Array(next.dropFirst())))
    }
}

extension GroupCommit where Outcome == Void {
    /// Groups whose writes report their own failures: every caller learns only that its item was handled.
    convenience init(maxGroup: Int, write: @escaping @Sendable ([Item]) async -> Void) {
        self.init(maxGroup: maxGroup) { items in
            await write(items)
            return Array(repeating: (), count: items.count)
        }
    }
}
