// Running and stopping a server: graceful shutdown with a grace period, and bounded waits for what closes after it.
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

extension KeywardRuntime {
    /// How long a stopping server waits for its push clients and database connections to close.
    static let storageCloseLimit: Duration = .seconds(10)

    /// Serves `application` until SIGTERM or SIGINT, then stops in order: the listener closes, requests in flight
    /// get `shutdown.grace` seconds to finish (event streams end at once with a `retry:` hint), whatever is left
    /// is cancelled, and the push clients and database close. Returns once all of that is done, so the process
    /// exits with 0 instead of waiting for a supervisor's SIGKILL.
    public func serve(_ application: some ApplicationProtocol) async throws {
        var group = ServiceGroupConfiguration(services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = .seconds(configuration.shutdownGrace)
        do {
            try await ServiceGroup(configuration: group).run()
        } catch {
            await closeStorage(waitingAtMost: Self.storageCloseLimit)
            throw error
        }
        logger.info("stopped serving; closing push clients and the database")
        await closeStorage(waitingAtMost: Self.storageCloseLimit)
    }

    /// `shutdown()`, waiting for it at most `limit`. Every request has ended by now, so what was written is
    /// committed; a connection pool that never reports its last connection closed must not keep the process alive.
    func closeStorage(waitingAtMost limit: Duration) async {
        let closed = await finishes(within: limit) { [self] in
            do {
                try await shutdown()
            } catch {
                logger.warning("closing the database failed", metadata: ["error": "\(error)"])
            }
        }
        if !closed {
            logger.error("push clients and database did not close within \(limit) of shutdown; exiting without waiting for them")
        }
    }
}

/// Runs `operation` in a task of its own and returns true when it ends within `limit`, false when the limit
/// passes first — without waiting for an operation that never ends (a task group would).
func finishes(within limit: Duration, _ operation: @escaping @Sendable () async -> Void) async -> Bool {
    let race = Race()
    var work: Task<Void, Never>?
    var timer: Task<Void, Never>?
    let finished = await withCheckedContinuation { continuation in
        race.start(continuation)
        work = Task {
            await operation()
            race.finish(true)
        }
        timer = Task {
            try? await Task.sleep(for: limit)
            race.finish(false)
        }
    }
    timer?.cancel()
    if !finished { work?.cancel() }
    return finished
}

/// Resumes a continuation once, with whichever result arrives first.
private final class Race: Sendable {
    private let waiting = Mutex<CheckedContinuation<Bool, Never>?>(nil)

    func start(_ continuation: CheckedContinuation<Bool, Never>) {
        waiting.withLock { $0 = continuation }
    }

    /// The first call resumes the continuation; later ones do nothing.
    func finish(_ result: Bool) {
        waiting.withLock { value in defer { value = nil }; return value }?.resume(returning: result)
    }
}
