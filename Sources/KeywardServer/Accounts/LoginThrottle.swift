import Foundation
import Synchronization

/// Slows password guessing: after `maxFailures` failed sign-ins for one username within `window`, further
/// attempts are refused until the window has passed, without running bcrypt. A push denied on the phone counts
/// as a failure too (as Keycloak's brute-force protector counts it for the original). Kept per node: with several
/// nodes behind a load balancer the limit applies per node, which still caps guessing at a few per minute.
public final class LoginThrottle: Sendable {
    public let maxFailures: Int
    public let window: TimeInterval
    private let clock: any KeywardClock
    private let failures = Mutex<[String: (count: Int, since: Date)]>([:])

    public init(clock: any KeywardClock, maxFailures: Int = 5, window: TimeInterval = 15 * 60) {
        self.clock = clock
        self.maxFailures = maxFailures
        self.window = window
    }

    /// Seconds until `username` may try again, or nil when it may try now.
    public func retryAfter(realm: String, username: String) -> Int? {
        let now = clock.now()
        return failures.withLock { table in
            guard let entry = table[Self.key(realm, username)] else { return nil }
            let ends = entry.since.addingTimeInterval(window)
            guard now < ends else {
                table[Self.key(realm, username)] = nil
                return nil
            }
            return entry.count >= maxFailures ? max(1, Int(ends.timeIntervalSince(now).rounded(.up))) : nil
        }
    }

    public func recordFailure(realm: String, username: String) {
        let now = clock.now()
        failures.withLock { table in
            let key = Self.key(realm, username)
            if let entry = table[key], now < entry.since.addingTimeInterval(window) {
                table[key] = (entry.count + 1, entry.since)
            } else {
                table[key] = (1, now)
            }
            // Bound the table: forget windows that have ended once it grows.
            if table.count > 100_000 { table = table.filter { now < $0.value.since.addingTimeInterval(window) } }
        }
    }

    public func recordSuccess(realm: String, username: String) {
        _ = failures.withLock { $0.removeValue(forKey: Self.key(realm, username)) }
    }

    private static func key(_ realm: String, _ username: String) -> String { "\(realm.count):\(realm):\(username.lowercased())" }
}
