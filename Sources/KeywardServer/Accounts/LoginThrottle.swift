import Crypto
import Foundation
import KeywardJOSE

/// Slows password guessing: each sign-in attempt for a username is counted before bcrypt runs, and after
/// `maxAttempts` in one `window` further attempts are refused, without running bcrypt, until the window has
/// passed. A successful sign-in clears the count; a push denied on the phone counts as an attempt (as Keycloak's
/// brute-force protector counts it for the original). Counts live in the database, so every node enforces the
/// same limit and concurrent attempts cannot overtake it.
public struct LoginThrottle: Sendable {
    public let maxAttempts: Int
    public let window: TimeInterval
    private let store: any LoginAttemptStore
    private let clock: any KeywardClock

    public init(store: any LoginAttemptStore, clock: any KeywardClock, maxAttempts: Int = 5, window: TimeInterval = 15 * 60) {
        self.store = store
        self.clock = clock
        self.maxAttempts = maxAttempts
        self.window = window
    }

    /// Counts one attempt. Returns nil when it may go ahead, or the seconds until the window ends.
    public func admit(realm: String, username: String) async throws -> Int? {
        let now = clock.now()
        let attempts = try await store.countAttempt(realm: realm, usernameHash: Self.hash(username), now: now, window: window)
        guard attempts.count > maxAttempts else { return nil }
        // To the nearest second: storage keeps milliseconds, so rounding up would turn 900 s into 901.
        return max(1, Int(attempts.windowStart.addingTimeInterval(window).timeIntervalSince(now).rounded()))
    }

    /// A failure found after the sign-in went ahead (a push denied on the phone).
    public func recordFailure(realm: String, username: String) async throws {
        _ = try await store.countAttempt(realm: realm, usernameHash: Self.hash(username), now: clock.now(), window: window)
    }

    public func recordSuccess(realm: String, username: String) async throws {
        try await store.clearAttempts(realm: realm, usernameHash: Self.hash(username))
    }

    /// Counts are kept under a hash: a username field sometimes holds a mistyped password.
    static func hash(_ username: String) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Array(username.lowercased().utf8))))
    }
}

public struct LoginAttempts: Sendable, Equatable {
    /// Attempts in the current window, this one included.
    public var count: Int
    public var windowStart: Date
}

public protocol LoginAttemptStore: Sendable {
    /// Adds one attempt, starting a new window when the last one began `window` or more ago.
    func countAttempt(realm: String, usernameHash: String, now: Date, window: TimeInterval) async throws -> LoginAttempts
    func clearAttempts(realm: String, usernameHash: String) async throws
    /// For the sweeper: forgets windows that have ended.
    func deleteAttempts(windowStartedBefore cutoff: Date) async throws -> Int
}
