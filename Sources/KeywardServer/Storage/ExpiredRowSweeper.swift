import Foundation
import Logging
import ServiceLifecycle

/// Background service that deletes expired replay entries and retired keys past their publication
/// window, marks push challenges past their expiry EXPIRED and forgets finished ones after a day, and drops
/// expired browser sessions, old login-attempt counts, audit events past their retention and pending devices nobody
/// decided on in time. It sweeps at start and then every `interval`; a failed
/// sweep is logged and retried at the next tick, so a database hiccup never stops the service. Stops on graceful
/// shutdown or cancellation.
public struct ExpiredRowSweeper: Service {
    public struct Counts: Sendable, Equatable {
        public var replayEntries: Int
        public var signingKeys: Int
        public var expiredChallenges = 0
        public var deletedChallenges = 0
        public var browserSessions = 0
        public var loginAttempts = 0
        public var auditEvents = 0
        public var pendingDevices = 0
    }

    /// How long a finished challenge is kept (the browser acts on its outcome within seconds; the audit table
    /// keeps the history).
    public static let finishedChallengeRetention: TimeInterval = 86400

    /// Longer than any login-throttle window, so a sweep never cuts one short.
    public static let loginAttemptRetention: TimeInterval = 86400

    let singleUse: any SingleUseStore
    let signingKeyStore: any SigningKeyStore
    let challengeStore: (any PushChallengeStore)?
    let browserSessionStore: (any BrowserSessionStore)?
    let loginAttemptStore: (any LoginAttemptStore)?
    let auditStore: (any AuditStore)?
    let deviceStore: (any DeviceStore)?
    /// How long a pending device waits for an operator (`devices.pendingLifetimeDays`).
    let pendingDeviceLifetime: TimeInterval
    /// How long audit events are kept (`audit.retentionDays`).
    let auditRetention: TimeInterval
    let clock: any KeywardClock
    let interval: Duration
    let logger: Logger

    public init(
        singleUse: any SingleUseStore, signingKeyStore: any SigningKeyStore, challengeStore: (any PushChallengeStore)? = nil,
        browserSessionStore: (any BrowserSessionStore)? = nil, loginAttemptStore: (any LoginAttemptStore)? = nil,
        auditStore: (any AuditStore)? = nil, auditRetention: TimeInterval = 90 * 86400, deviceStore: (any DeviceStore)? = nil,
        pendingDeviceLifetime: TimeInterval = DeviceService.Limits.default.pendingLifetime, clock: any KeywardClock,
        interval: Duration = .seconds(60), logger: Logger
    ) {
        precondition(interval > .zero, "the sweep interval must be positive")
        self.singleUse = singleUse
        self.signingKeyStore = signingKeyStore
        self.challengeStore = challengeStore
        self.browserSessionStore = browserSessionStore
        self.loginAttemptStore = loginAttemptStore
        self.auditStore = auditStore
        self.auditRetention = auditRetention
        self.deviceStore = deviceStore
        self.pendingDeviceLifetime = pendingDeviceLifetime
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
        let replayEntries = try await singleUse.deleteExpired(now: now)
        let signingKeys = try await signingKeyStore.deleteUnpublishedKeys(now: now)
        var counts = Counts(replayEntries: replayEntries, signingKeys: signingKeys)
        if let challengeStore {
            let swept = try await challengeStore.sweepChallenges(now: now, deleteEndedBefore: now.addingTimeInterval(-Self.finishedChallengeRetention))
            counts.expiredChallenges = swept.expired
            counts.deletedChallenges = swept.deleted
        }
        if let browserSessionStore {
            counts.browserSessions = try await browserSessionStore.deleteExpiredSessions(now: now)
        }
        if let loginAttemptStore {
            counts.loginAttempts = try await loginAttemptStore.deleteAttempts(windowStartedBefore: now.addingTimeInterval(-Self.loginAttemptRetention))
        }
        if let auditStore {
            counts.auditEvents = try await auditStore.deleteEvents(before: now.addingTimeInterval(-auditRetention))
        }
        if let deviceStore {
            counts.pendingDevices = try await deviceStore.deletePendingDevices(registeredBefore: now.addingTimeInterval(-pendingDeviceLifetime))
        }
        return counts
    }

    private func sweepLoggingErrors() async {
        do {
            let counts = try await sweepOnce()
            logger.debug(
                "swept expired rows",
                metadata: [
                    "replayEntries": "\(counts.replayEntries)", "signingKeys": "\(counts.signingKeys)",
                    "expiredChallenges": "\(counts.expiredChallenges)", "deletedChallenges": "\(counts.deletedChallenges)",
                    "browserSessions": "\(counts.browserSessions)", "loginAttempts": "\(counts.loginAttempts)", "auditEvents": "\(counts.auditEvents)",
                    "pendingDevices": "\(counts.pendingDevices)",
                ]
            )
        } catch {
            guard !Task.isCancelled else { return }
            logger.error("sweeping expired rows failed; will retry", metadata: ["error": "\(error)"])
        }
    }
}
