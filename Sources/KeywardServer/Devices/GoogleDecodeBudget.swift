// Hourly budgets per client address and per app for the calls registrations cause to Google's token decoder.
import Foundation
import Synchronization

/// How many calls to Google's decodeIntegrityToken registrations may cause (second security review M1): each
/// registration of an app set to `--play-integrity-google` is one outbound call, made before Keyward knows anything
/// about the sender, and Google's quota (10,000 a day per project by default) is the app's, for everyone. Calls are
/// counted per client address and per app in fixed one-hour windows, before the call is made.
///
/// Per node and in memory, as `ProviderCallbackLimiter` is: the cost to stop is each node's outbound call. At most
/// `maxKeys` windows are kept per kind (`BoundedWindows` holds the bound).
final class GoogleDecodeBudget: Sendable {
    enum Refusal: String, Sendable {
        case addressLimit = "address_limit"
        case appLimit = "app_limit"
    }

    let perAddress: Int
    let perApp: Int
    let window: TimeInterval

    private struct Window {
        var start: Date
        var calls: Int
    }

    private struct Windows {
        var byAddress: BoundedWindows<Window>
        var byApp: BoundedWindows<Window>
    }

    private let windows: Mutex<Windows>

    init(perAddress: Int, perApp: Int, window: TimeInterval = 3600, maxKeys: Int = 10_000) {
        self.perAddress = perAddress
        self.perApp = perApp
        self.window = window
        windows = Mutex(Windows(byAddress: BoundedWindows(maxKeys: maxKeys, start: \.start), byApp: BoundedWindows(maxKeys: maxKeys, start: \.start)))
    }

    /// Takes one call from both the address's and the app's budget, or neither: nil when the call may be made,
    /// otherwise which budget is spent. An unknown address (no socket) is counted against the app only.
    func take(address: String, app: String, now: Date) -> Refusal? {
        windows.withLock { windows in
            var byApp = current(windows.byApp[app], now: now)
            let counted = address == ClientAddress.unknown ? nil : address
            let byAddress = counted.map { current(windows.byAddress[$0], now: now) }
            if let byAddress, byAddress.calls >= perAddress { return .addressLimit }
            guard byApp.calls < perApp else { return .appLimit }
            byApp.calls += 1
            windows.byApp.store(byApp, for: app) { now.timeIntervalSince($0.start) >= window }
            if let counted, var spent = byAddress {
                spent.calls += 1
                windows.byAddress.store(spent, for: counted) { now.timeIntervalSince($0.start) >= window }
            }
            return nil
        }
    }

    private func current(_ stored: Window?, now: Date) -> Window {
        guard let stored, now.timeIntervalSince(stored.start) < window else { return Window(start: now, calls: 0) }
        return stored
    }
}
