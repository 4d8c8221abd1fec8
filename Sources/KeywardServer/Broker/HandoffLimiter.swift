// Counting what a caller does with hand-offs in a window, and refusing past a limit.
import Foundation
import Synchronization

/// Events per key (a client address, a client) in a fixed window; once a key has `limit` of them, it is refused
/// until its window ends. The broker counts two things with it: failed takes per address (a code has 128 bits and
/// needs its nonce and key besides, so guessing is hopeless, but an address whose takes keep failing is doing
/// something else than taking its own hand-offs) and hand-offs a relay client stores. Per node and in memory, at most
/// `maxKeys` windows (`BoundedWindows`).
final class HandoffLimiter: Sendable {
    let limit: Int
    let window: TimeInterval

    private struct Window {
        var start: Date
        var count: Int
    }

    private let windows: Mutex<BoundedWindows<Window>>

    init(limit: Int, window: TimeInterval, maxKeys: Int = 10_000) {
        self.limit = limit
        self.window = window
        windows = Mutex(BoundedWindows(maxKeys: maxKeys, start: \.start))
    }

    /// Failed takes from one address: 20 in 10 minutes.
    static func failedTakes() -> HandoffLimiter { HandoffLimiter(limit: 20, window: 600) }

    /// Hand-offs one relay client stores through the API: 6,000 a minute.
    static func puts() -> HandoffLimiter { HandoffLimiter(limit: 6000, window: 60) }

    /// nil when `key` may go on; otherwise the seconds until its window ends.
    func refusal(_ key: String, now: Date) -> Int? {
        guard key != ClientAddress.unknown else { return nil }
        return windows.withLock { windows in
            guard let current = windows[key], now.timeIntervalSince(current.start) < window, current.count >= limit else { return nil }
            return max(1, Int(current.start.addingTimeInterval(window).timeIntervalSince(now).rounded(.up)))
        }
    }

    func count(_ key: String, now: Date) {
        guard key != ClientAddress.unknown else { return }
        windows.withLock { windows in
            var current = windows[key].flatMap { now.timeIntervalSince($0.start) < window ? $0 : nil } ?? Window(start: now, count: 0)
            current.count += 1
            windows.store(current, for: key) { now.timeIntervalSince($0.start) >= window }
        }
    }
}
