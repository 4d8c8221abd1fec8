// Limiting per client address the hand-off takes that fail.
import Foundation
import Synchronization

/// A code has 128 bits and needs its nonce and key besides, so guessing is hopeless; still, an address whose takes
/// keep failing is doing something else than taking its own hand-offs, and is refused for the rest of the window.
/// An app's own takes succeed, so it never meets the limit. Per node and in memory, at most `maxAddresses` windows
/// (`BoundedWindows`).
final class HandoffTakeLimiter: Sendable {
    let limit: Int
    let window: TimeInterval

    private struct Window {
        var start: Date
        var failures: Int
    }

    private let windows: Mutex<BoundedWindows<Window>>

    init(limit: Int = 20, window: TimeInterval = 600, maxAddresses: Int = 10_000) {
        self.limit = limit
        self.window = window
        windows = Mutex(BoundedWindows(maxKeys: maxAddresses, start: \.start))
    }

    /// nil when `address` may take; otherwise the seconds until its window ends.
    func refusal(_ address: String, now: Date) -> Int? {
        guard address != ClientAddress.unknown else { return nil }
        return windows.withLock { windows in
            guard let current = windows[address], now.timeIntervalSince(current.start) < window, current.failures >= limit else { return nil }
            return max(1, Int(current.start.addingTimeInterval(window).timeIntervalSince(now).rounded(.up)))
        }
    }

    func failed(_ address: String, now: Date) {
        guard address != ClientAddress.unknown else { return }
        windows.withLock { windows in
            var current = windows[address].flatMap { now.timeIntervalSince($0.start) < window ? $0 : nil } ?? Window(start: now, failures: 0)
            current.failures += 1
            windows.store(current, for: address) { now.timeIntervalSince($0.start) >= window }
        }
    }
}
