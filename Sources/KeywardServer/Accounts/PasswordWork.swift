// Running bcrypt password checks on threads of their own, refusing checks beyond a bound.
import NIOPosix
import Synchronization

/// Where password checks run: bcrypt is slow on purpose (tens of milliseconds at the default cost), so it runs
/// on threads of its own, never on the event loops or Swift's cooperative threads that serve every other
/// request. At most `maxInFlight` checks run or wait at once; beyond that a check is refused at once (the
/// sign-in page answers 503 with `Retry-After`) instead of queueing without bound behind a burst of guesses.
final class PasswordWork: Sendable {
    struct Busy: Error {}

    let maxInFlight: Int
    private let pool: NIOThreadPool
    private let inFlight = Mutex(0)
    /// Counts each check that ran, and each refused (a metric).
    private let record: @Sendable (_ ran: Bool) -> Void

    init(threads: Int, maxInFlight: Int, record: @escaping @Sendable (_ ran: Bool) -> Void = { _ in }) {
        precondition(threads > 0 && maxInFlight > 0)
        self.maxInFlight = maxInFlight
        self.record = record
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
    }

    /// Runs `check` on the password threads, or throws `Busy` when `maxInFlight` checks are under way.
    func run<T: Sendable>(_ check: @escaping @Sendable () -> T) async throws(Busy) -> T {
        let admitted = inFlight.withLock { count in
            guard count < maxInFlight else { return false }
            count += 1
            return true
        }
        guard admitted else {
            record(false)
            throw Busy()
        }
        defer { inFlight.withLock { $0 -= 1 } }
        do {
            let result = try await pool.runIfActive(check)
            record(true)
            return result
        } catch {
            throw Busy()  // the pool has been shut down: the server is stopping
        }
    }

    /// Checks under way now.
    var load: Int { inFlight.withLock { $0 } }

    func shutdown() async {
        try? await pool.shutdownGracefully()
    }
}
