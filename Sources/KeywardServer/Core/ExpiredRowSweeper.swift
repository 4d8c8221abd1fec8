// The background service that runs every part's sweeps of expired rows on an interval.
import Foundation
import Logging
import ServiceLifecycle

/// One kind of row a part expires: `run` deletes (or marks) what is past its time at `now` and answers how many rows
/// went, under one name or more (push challenges count the expired and the deleted apart). Parts declare theirs
/// (`KeywardPart.sweeps`); the sweeper runs them all.
public struct ExpiredRowSweep: Sendable {
    let run: @Sendable (_ now: Date) async throws -> [String: Int]

    /// A sweep counted under several names.
    init(counting run: @escaping @Sendable (_ now: Date) async throws -> [String: Int]) {
        self.run = run
    }

    /// A sweep counted under `name`.
    init(_ name: String, _ run: @escaping @Sendable (_ now: Date) async throws -> Int) {
        self.run = { now in [name: try await run(now)] }
    }
}

/// Background service that runs every part's sweeps (expired single-use records, retired keys past their
/// publication window, push challenges past their expiry, expired browser sessions, old login-attempt counts, audit
/// events past their retention, pending devices nobody decided on in time). It sweeps at start and then every
/// `interval`; a failed sweep is logged and retried at the next tick, so a database hiccup never stops the service.
/// Stops on graceful shutdown or cancellation.
public struct ExpiredRowSweeper: Service {
    /// Rows swept, by the names the sweeps count under; a name no sweep reported reads 0.
    @dynamicMemberLookup
    public struct Counts: Sendable, Equatable, CustomStringConvertible {
        public var rows: [String: Int]

        public init(_ rows: [String: Int] = [:]) { self.rows = rows }

        public subscript(dynamicMember name: String) -> Int { rows[name] ?? 0 }

        public var description: String { rows.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
    }

    let sweeps: [ExpiredRowSweep]
    let clock: any KeywardClock
    let interval: Duration
    let logger: Logger

    public init(sweeps: [ExpiredRowSweep], clock: any KeywardClock, interval: Duration = .seconds(60), logger: Logger) {
        precondition(interval > .zero, "the sweep interval must be positive")
        self.sweeps = sweeps
        self.clock = clock
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                await sweepLoggingErrors()
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return  // cancelled: shutting down
                }
            }
        }
    }

    /// One sweep at the clock's current time; returns how many rows of each kind went.
    @discardableResult
    public func sweepOnce() async throws -> Counts {
        let now = clock.now()
        var counts = Counts()
        for sweep in sweeps {
            counts.rows.merge(try await sweep.run(now), uniquingKeysWith: +)
        }
        return counts
    }

    private func sweepLoggingErrors() async {
        do {
            let counts = try await sweepOnce()
            logger.debug("swept expired rows", metadata: counts.rows.mapValues { "\($0)" })
        } catch {
            guard !Task.isCancelled else { return }
            logger.error("sweeping expired rows failed; will retry", metadata: ["error": "\(error)"])
        }
    }
}
