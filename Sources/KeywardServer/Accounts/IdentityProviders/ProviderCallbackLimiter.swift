import Foundation
import Synchronization

/// Bounds what one client can make Keyward send to identity providers (security review L4): every callback whose
/// code exchange or answer is refused counts against its address, and once an address has `limit` such failures
/// in `window`, its callbacks are refused before the state is spent or the provider is called, until the window
/// ends. Without it, anyone could loop start and a callback with a made-up code, each loop a token request under
/// Keyward's client credentials, until the provider throttled Keyward for everyone.
///
/// Per node and in memory: the cost to stop is the outbound call, which each node makes itself, and a person's
/// sign-ins do not fail. At most `maxAddresses` windows are kept; when full, ended windows go first, then the
/// oldest, so addresses cannot be sprayed to grow the map.
final class ProviderCallbackLimiter: Sendable {
    let limit: Int
    let window: TimeInterval
    let maxAddresses: Int

    private struct Window {
        var start: Date
        var failures: Int
    }

    private let windows = Mutex<[String: Window]>([:])

    init(limit: Int, window: TimeInterval = 600, maxAddresses: Int = 10_000) {
        self.limit = limit
        self.window = window
        self.maxAddresses = maxAddresses
    }

    /// nil when a callback from `address` may go ahead; otherwise the seconds until its window ends.
    func admit(_ address: String, now: Date) -> Int? {
        guard address != ClientAddress.unknown else { return nil }
        return windows.withLock { windows in
            guard let current = windows[address], now.timeIntervalSince(current.start) < window, current.failures >= limit else { return nil }
            return max(1, Int(current.start.addingTimeInterval(window).timeIntervalSince(now).rounded(.up)))
        }
    }

    func recordFailure(_ address: String, now: Date) {
        guard address != ClientAddress.unknown else { return }
        windows.withLock { windows in
            if var current = windows[address], now.timeIntervalSince(current.start) < window {
                current.failures += 1
                windows[address] = current
                return
            }
            if windows.count >= maxAddresses {
                windows = windows.filter { now.timeIntervalSince($0.value.start) < window }
                if windows.count >= maxAddresses, let oldest = windows.min(by: { $0.value.start < $1.value.start })?.key {
                    windows.removeValue(forKey: oldest)
                }
            }
            windows[address] = Window(start: now, failures: 1)
        }
    }

    /// Refusals that came from a provider's answer, i.e. after an outbound call: what the limit counts.
    static func counts(_ code: SignInFailure.Code) -> Bool {
        switch code {
        case .codeExchangeFailed, .idTokenInvalid, .accessTokenInvalid, .accessTokenWrongApp: true
        default: false
        }
    }
}
