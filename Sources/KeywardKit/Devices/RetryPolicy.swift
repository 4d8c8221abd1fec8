// When a device registration or key rotation is retried: no answer or a 5xx, with capped backoff and jitter.
import Foundation

/// When a registration or key rotation is tried again: only after an answer that may change by itself — no answer
/// at all (``KeywardKitError/unreachable(url:reason:)``) or a 5xx — up to ``maxAttempts`` attempts, waiting
/// min(2^attempt s + jitter, ``maxDelay``) after failed attempt number `attempt` (1, 2, …), the jitter drawn from
/// 0-0.5 s so that installations cut off together do not all come back in the same second. A 4xx is the
/// server's considered answer and is never retried. Each attempt fetches a fresh challenge.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first one included.
    public var maxAttempts: Int
    /// The longest wait between two attempts.
    public var maxDelay: Duration
    /// The jitter in seconds, 0-0.5 (a uniform draw by default).
    public var jitter: @Sendable () -> Double
    /// Waits between attempts (`Task.sleep` by default; tests record the delays instead).
    public var sleep: @Sendable (Duration) async throws -> Void

    /// Five attempts, at most 30 s apart, with random jitter and real sleeps.
    public init(
        maxAttempts: Int = 5, maxDelay: Duration = .seconds(30), jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...0.5) },
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.maxAttempts = maxAttempts
        self.maxDelay = maxDelay
        self.jitter = jitter
        self.sleep = sleep
    }

    /// The wait after failed attempt number `attempt` (1 for the first).
    public func delay(afterAttempt attempt: Int) -> Duration {
        let exponent = min(max(attempt, 0), 30)
        let seconds = Double(1 << exponent) + min(max(jitter(), 0), 0.5)
        return min(.milliseconds(Int64((seconds * 1000).rounded())), maxDelay)
    }

    /// Whether `error` may go away by itself: no answer, or a 5xx.
    public static func isRetryable(_ error: any Error) -> Bool {
        switch error as? KeywardKitError {
        case .unreachable?: true
        case .server(let status, _, _)?: status >= 500
        default: false
        }
    }
}
