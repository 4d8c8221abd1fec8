// Limiting audit rows for refused requests to one per realm and reason a minute, counting the rest.
import Foundation
import Synchronization

/// Keeps the audit rows of refused requests to one per realm and reason a minute.
///
/// A refusal before the caller is known costs its sender nothing, so recording every one would let anyone grow
/// the audit table (and the log) at will. The first refusal of a minute is recorded; the rest of that minute
/// are counted, and the next recorded row carries the count as `suppressed`. Metrics still count every
/// refusal. Keys are an existing realm and a reason from a closed set, so the map stays small.
final class RefusalAuditSampler: Sendable {
    struct Key: Hashable, Sendable {
        let realm: String
        let reason: String
    }

    private struct Window: Sendable {
        var start: Date
        var suppressed: Int
    }

    let window: TimeInterval
    private let windows = Mutex<[Key: Window]>([:])

    init(window: TimeInterval = 60) {
        self.window = window
    }

    /// nil when this refusal is folded into the current minute; otherwise it is to be recorded, and the value is
    /// how many refusals were folded since the last recorded one.
    func admit(_ key: Key, now: Date) -> Int? {
        windows.withLock { windows in
            if var current = windows[key], now.timeIntervalSince(current.start) < window {
                current.suppressed += 1
                windows[key] = current
                return nil
            }
            let folded = windows[key]?.suppressed ?? 0
            windows[key] = Window(start: now, suppressed: 0)
            return folded
        }
    }
}
