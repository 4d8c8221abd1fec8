// Test support: a clock tests move by hand.
import Foundation
import KeywardServer
import Synchronization

/// A clock tests move by hand.
final class TestClock: KeywardClock {
    private let current: Mutex<Date>

    init(_ start: Date = Date()) { current = Mutex(start) }

    func now() -> Date { current.withLock { $0 } }

    func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }

    func set(_ date: Date) { current.withLock { $0 = date } }
}
