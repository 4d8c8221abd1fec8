// Running Swift tasks on one owned NIO event loop, falling back safely once it is closed.
import NIOCore
import Synchronization

/// Runs Swift tasks and work on one NIO event loop that belongs to its owner: a task preferring this executor
/// (`Task(executorPreference:)`) resumes on the loop's thread after every `await`, instead of on the shared event
/// loops that serve requests.
///
/// A loop that has shut down drops what it is given, which would leave a task suspended for ever. So the owner
/// calls `close` before shutting the loop down: from then on jobs run on the global executor and work is
/// refused, while whatever was accepted before still runs as the loop drains.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop
    private let closed = Mutex(false)

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        if !accepted { globalConcurrentExecutor.enqueue(job) }
    }

    /// Queues `work` on the loop; false once closed.
    func execute(_ work: @escaping @Sendable () -> Void) -> Bool {
        closed.withLock { closed in
            guard !closed else { return false }
            eventLoop.execute(work)
            return true
        }
    }

    /// Runs `work` on the loop: at once when already there, else queued and awaited. `closedError` once closed.
    func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result, closedError: any Error) async throws -> Result {
        if eventLoop.inEventLoop { return try work() }
        return try await withCheckedThrowingContinuation { continuation in
            let accepted = execute { continuation.resume(with: Swift.Result { try work() }) }
            if !accepted { continuation.resume(throwing: closedError) }
        }
    }

    /// Stops using the loop (before its owner shuts it down).
    func close() {
        closed.withLock { $0 = true }
    }
}
