// Writing queued items in groups from one writer task, so concurrent callers share writes.
import Synchronization

/// Writes items in groups. Callers queue their items; one writer task takes everything queued (up to `maxGroup`),
/// writes it in one go, answers each caller with its item's outcome, and takes the next group, until nothing is
/// queued. Nothing is acknowledged before it is written; alone, an item is written at once. Under load, N
/// concurrent callers cost a few writes instead of N.
///
/// The writer is a task of its own rather than one of the callers, on the database's own thread where it has one
/// (`KeywardDatabase.writerExecutor`): a caller's task resumes on its request's event loop, which under load is
/// busy verifying signatures, so a group handed from caller to caller waited in that queue twice per write (for
/// the write's answer, then for the next caller's turn) while the database sat idle. On SQLite the writer runs
/// each group's statement where the connection runs it, without waking another thread.
final class GroupCommit<Item: Sendable, Outcome: Sendable>: Sendable {
    private typealias Waiter = (item: Item, caller: CheckedContinuation<Outcome, Never>)

    private struct State: Sendable {
        var writing = false
        var queued: [Waiter] = []
    }

    private let state = Mutex(State())
    private let maxGroup: Int
    private let executor: (any TaskExecutor)?
    private let write: @Sendable ([Item]) async -> [Outcome]

    /// `write` receives 1 to `maxGroup` items and answers one outcome per item, in order; it must not throw (a
    /// failure is an outcome). The writer task runs on `executor` (nil: the default one).
    init(maxGroup: Int, executor: (any TaskExecutor)? = nil, write: @escaping @Sendable ([Item]) async -> [Outcome]) {
        precondition(maxGroup > 0)
        self.maxGroup = maxGroup
        self.executor = executor
        self.write = write
    }

    func submit(_ item: Item) async -> Outcome {
        await withCheckedContinuation { (caller: CheckedContinuation<Outcome, Never>) in
            let startsWriter = state.withLock { state in
                state.queued.append((item, caller))
                guard !state.writing else { return false }
                state.writing = true
                return true
            }
            if startsWriter { Task(executorPreference: executor) { await self.writeQueued() } }
        }
    }

    /// Items waiting for a write to take them (tests wait on it instead of sleeping).
    var queuedCount: Int { state.withLock { $0.queued.count } }

    /// The writer: groups in arrival order until the queue is empty, then it ends (the next submit starts one).
    private func writeQueued() async {
        while true {
            let group = state.withLock { state -> [Waiter] in
                let group = Array(state.queued.prefix(maxGroup))
                state.queued.removeFirst(group.count)
                if group.isEmpty { state.writing = false }
                return group
            }
            guard !group.isEmpty else { return }
            let outcomes = await write(group.map(\.item))
            precondition(outcomes.count == group.count, "a group write answers one outcome per item")
            for (waiter, outcome) in zip(group, outcomes) { waiter.caller.resume(returning: outcome) }
        }
    }
}

extension GroupCommit where Outcome == Void {
    /// Groups whose writes report their own failures: every caller learns only that its item was handled.
    convenience init(maxGroup: Int, executor: (any TaskExecutor)? = nil, write: @escaping @Sendable ([Item]) async -> Void) {
        self.init(maxGroup: maxGroup, executor: executor) { items in
            await write(items)
            return Array(repeating: (), count: items.count)
        }
    }
}

extension GroupCommit where Outcome == Result<Void, any Error> {
    /// Groups that `write` stores together (one statement or one transaction for all of them). When it refuses a
    /// group, each item is written again alone, so that only the caller whose item is at fault learns of it, with its
    /// own message; a database that is gone (`StoreError.unavailable`) fails the whole group at once instead.
    convenience init(maxGroup: Int, executor: (any TaskExecutor)? = nil, writeTogether write: @escaping @Sendable ([Item]) async throws -> Void) {
        self.init(maxGroup: maxGroup, executor: executor) { items in
            do {
                try await write(items)
                return items.map { _ in .success(()) }
            } catch let error as StoreError {
                if case .unavailable = error { return items.map { _ in .failure(error) } }
                if items.count == 1 { return [.failure(error)] }
            } catch {
                return items.map { _ in .failure(error) }
            }
            var outcomes: [Result<Void, any Error>] = []
            for item in items {
                do {
                    try await write([item])
                    outcomes.append(.success(()))
                } catch {
                    outcomes.append(.failure(error))
                }
            }
            return outcomes
        }
    }
}
