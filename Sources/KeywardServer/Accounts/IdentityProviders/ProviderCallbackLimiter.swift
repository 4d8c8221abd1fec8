// Limiting per client address the failed provider callbacks that make Keyward call providers.
import Foundation
import Synchronization

/// Bounds what one client can make Keyward send to identity providers (security review L4): every callback whose
/// code exchange or answer is refused counts against its address, and once an address has `limit` such failures
/// in `window`, its callbacks are refused before the state is spent or the provider is called, until the window
/// ends. Without it, anyone could loop start and a callback with a made-up code, each loop a token request under
/// Keyward's client credentials, until the provider throttled Keyward for everyone.
///
/// Per node and in memory: the cost to stop is the outbound call, which each node makes itself, and a person's
/// sign-ins do not fail. At most `maxAddresses` windows are kept (`BoundedWindows`), so addresses cannot be sprayed
/// to grow the map.
final class ProviderCallbackLimiter: Sendable {
    let limit: Int
    let window: TimeInterval

    private struct Window {
        var start: Date
        var failures: Int
        /// Callbacks admitted and not finished yet: they count against the limit too, or firing many at once
        /// would send them all before the first failure was counted.
        var inFlight: Int
    }

    private let windows: Mutex<BoundedWindows<Window>>

    init(limit: Int, window: TimeInterval = 600, maxAddresses: Int = 10_000) {
        self.limit = limit
        self.window = window
        windows = Mutex(BoundedWindows(maxKeys: maxAddresses, start: \.start))
    }

    /// nil when a callback from `address` may go ahead, which holds one of the address's places until `finish`;
    /// otherwise the seconds until its window ends.
    func admit(_ address: String, now: Date) -> Int? {
        guard address != ClientAddress.unknown else { return nil }
        return windows.withLock { windows in
            var current = Self.current(windows[address], now: now, window: window)
            guard current.failures + current.inFlight < limit else {
                return max(1, Int(current.start.addingTimeInterval(window).timeIntervalSince(now).rounded(.up)))
            }
            current.inFlight += 1
            store(current, for: address, in: &windows, now: now)
            return nil
        }
    }

    /// The admitted callback ended; `failed` when the provider's exchange or answer was refused.
    func finish(_ address: String, failed: Bool, now: Date) {
        guard address != ClientAddress.unknown else { return }
        windows.withLock { windows in
            var current = Self.current(windows[address], now: now, window: window)
            current.inFlight = max(0, current.inFlight - 1)
            if failed { current.failures += 1 }
            store(current, for: address, in: &windows, now: now)
        }
    }

    /// The address's window at `now`: a new one when the last has ended (callbacks still in flight carry over).
    private static func current(_ stored: Window?, now: Date, window: TimeInterval) -> Window {
        guard let stored else { return Window(start: now, failures: 0, inFlight: 0) }
        return now.timeIntervalSince(stored.start) < window ? stored : Window(start: now, failures: 0, inFlight: stored.inFlight)
    }

    /// A window in flight is never dropped: its callback has yet to count.
    private func store(_ value: Window, for address: String, in windows: inout BoundedWindows<Window>, now: Date) {
        windows.store(value, for: address) { now.timeIntervalSince($0.start) >= window && $0.inFlight == 0 }
    }

    /// Refusals that came from a provider's answer, i.e. after an outbound call: what the limit counts.
    static func counts(_ code: SignInFailure.Code) -> Bool {
        switch code {
        case .codeExchangeFailed, .idTokenInvalid, .accessTokenInvalid, .accessTokenWrongApp: true
        default: false
        }
    }
}
