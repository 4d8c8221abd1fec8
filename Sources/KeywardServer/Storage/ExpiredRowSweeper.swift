import Foundation
import Logging
import ServiceLifecycle

/// Background service that deletes expired replay entries and retired keys past their publication
/// window. It sweeps at start and then every `interval`; a failed sweep is logged and retried at the
/// next tick, so a database hiccup never stops the service. Stops on graceful shutdown or cancellation.
public struct ExpiredRowSweeper: Service {
    public struct Counts: Sendable, Equatable {
        public var replayEntries: Int
        public var signingKeys: Int
    }

    let replayStore: any ReplayStore
    let signingKeyStore: any SigningKeyStore
    let clock: any KeywardClock
    let interval: Duration
    let logger: Logger

    public init(
        replayStore: any ReplayStore, signingKeyStore: any SigningKeyStore, clock: any KeywardClock,
        interval: Duration = .seconds(60), logger: Logger
    ) {
        precondition(interval > .zero, "the sweep interval must be positive")
        self.replayStore = replayStore
        self.signingKeyStore = signingKeyStore
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
        let replayEntries = try await replayStore.deleteExpired(now: now)
        let signingKeys = try await signingKeyStore.deleteUnpublishedKeys(now: now)
        return Counts(replayEntries: replayEntries, signingKeys: signingKeys)
    }

    private func sweepLoggingErrors() async {
        do {
            let counts = try await sweepOnce()
            logger.debug(
                "swept expired rows",
                metadata: ["replayEntries": "\(counts.replayEntries)", "signingKeys": "\(counts.signingKeys)"]
            )
        } catch {
            guard !Task.isCancelled else { return }
            logger.error("sweeping expired rows failed; will retry", metadata: ["error": "\(error)"])
        }
    }
}
