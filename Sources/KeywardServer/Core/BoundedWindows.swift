// Per-client windows kept in memory for the limits each node enforces, bounded so sprayed keys cannot grow them.
import Foundation

/// A map from a client (an address, an app) to its current window, for limits a node keeps in memory
/// (`ProviderCallbackLimiter`, `GoogleDecodeBudget`). At most `maxKeys` are kept: storing a new key into a full map
/// first drops the windows that have ended, then, if still full, the one that started first.
struct BoundedWindows<Window: Sendable>: Sendable {
    let maxKeys: Int
    /// When a window began.
    let start: @Sendable (Window) -> Date
    private var windows: [String: Window] = [:]

    init(maxKeys: Int, start: @escaping @Sendable (Window) -> Date) {
        self.maxKeys = maxKeys
        self.start = start
    }

    subscript(key: String) -> Window? { windows[key] }

    /// Stores `window` for `key`; `ended` tells the windows that may go when the map is full.
    mutating func store(_ window: Window, for key: String, ended: (Window) -> Bool) {
        if windows[key] == nil, windows.count >= maxKeys {
            windows = windows.filter { !ended($0.value) }
            if windows.count >= maxKeys, let oldest = windows.min(by: { start($0.value) < start($1.value) })?.key {
                windows.removeValue(forKey: oldest)
            }
        }
        windows[key] = window
    }
}
