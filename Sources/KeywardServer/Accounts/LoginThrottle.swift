// Slowing password guessing with sign-in attempt limits per username and per client address.
import Crypto
import Foundation
import KeywardJOSE

/// Slows password guessing: each sign-in attempt is counted before bcrypt runs, per username and per client
/// address, and after `maxAttempts` for one username (or `maxAttemptsPerAddress` from one address) in one
/// `window` further attempts are refused, without running bcrypt, until the window has passed. A successful
/// sign-in clears the username's count (not the address's: one valid account must not reset a guesser's
/// budget); a push denied on the phone counts as an attempt (as Keycloak's brute-force protector counts it for
/// the original). Counts live in the database, so every node enforces the same limits and concurrent attempts
/// cannot overtake them.
public struct LoginThrottle: Sendable {
    public let maxAttempts: Int
    public let maxAttemptsPerAddress: Int
    public let window: TimeInterval
    private let store: any LoginAttemptStore
    private let clock: any KeywardClock

    public init(
        store: any LoginAttemptStore, clock: any KeywardClock, maxAttempts: Int = 5, maxAttemptsPerAddress: Int = 100,
        window: TimeInterval = 15 * 60
    ) {
        self.store = store
        self.clock = clock
        self.maxAttempts = maxAttempts
        self.maxAttemptsPerAddress = maxAttemptsPerAddress
        self.window = window
    }

    /// Counts one attempt. Returns nil when it may go ahead, or the seconds until the window that refused it
    /// ends. `address` is `ClientAddress.unknown` when there is no socket (in-process tests): not counted.
    public func admit(realm: String, username: String, address: String = ClientAddress.unknown) async throws -> Int? {
        let now = clock.now()
        let byName = try await store.countAttempt(realm: realm, usernameHash: Self.hash(username), now: now, window: window)
        var refusal = byName.count > maxAttempts ? byName : nil
        if address != ClientAddress.unknown {
            let byAddress = try await store.countAttempt(realm: realm, usernameHash: Self.addressKey(address), now: now, window: window)
            // Both refusing: the one whose window ends later decides the wait.
            if byAddress.count > maxAttemptsPerAddress, refusal.map({ byAddress.windowStart > $0.windowStart }) ?? true { refusal = byAddress }
        }
        guard let refusal else { return nil }
        // To the nearest second: storage keeps milliseconds, so rounding up would turn 900 s into 901.
        return max(1, Int(refusal.windowStart.addingTimeInterval(window).timeIntervalSince(now).rounded()))
    }

    /// A failure found after the sign-in went ahead (a push denied on the phone).
    public func recordFailure(realm: String, username: String) async throws {
        _ = try await store.countAttempt(realm: realm, usernameHash: Self.hash(username), now: clock.now(), window: window)
    }

    public func recordSuccess(realm: String, username: String) async throws {
        try await store.clearAttempts(realm: realm, usernameHash: Self.hash(username))
    }

    /// Address counts share the table under a key no username hash can take (a hash has no colon).
    static func addressKey(_ address: String) -> String {
        "address:" + Base64URL.encode(Array(SHA256.hash(data: Array(address.utf8))))
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
