import Synchronization

/// Writes items in groups. A caller whose item arrives while a write is in flight queues it; when that write
/// ends, the first queued caller writes everything queued so far in one go. Every caller returns once the write
/// holding its item has ended, so nothing is acknowledged before it is written; alone, an item is written at
/// once. Under load, N concurrent callers cost a few writes instead of N.
final class GroupCommit<Item: Sendable>: Sendable {
    private typealias Waiter = (item: Item, caller: CheckedContinuation<Turn, Never>)

    private enum Turn: Sendable {
        /// Write `own` and the items of `others`, tell `others` they are written, then hand over.
        case write(own: Item, others: [Waiter])
        /// Another caller wrote this caller's item.
        case written
    }

    private struct State: Sendable {
        var writing = false
        var queued: [Waiter] = []
    }

    private let state = Mutex(State())
    private let maxGroup: Int
    private let write: @Sendable ([Item]) async -> Void

    /// `write` receives 1 to `maxGroup` items and must not throw: it reports its own failures.
    init(maxGroup: Int, write: @escaping @Sendable ([Item]) async -> Void) {
        precondition(maxGroup > 0)
        self.maxGroup = maxGroup
        self.write = write
    }

    func submit(_ item: Item) async {
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
        guard case .write(let own, let others) = turn else { return }
        await write([own] + others.map(\.item))
        for waiter in others { waiter.caller.resume(returning: .written) }
        handOver()
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
