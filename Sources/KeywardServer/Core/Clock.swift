// The injectable source of "now" for every service, so tests can move time without sleeping.
import Foundation

/// The source of "now" for every service. Injected so tests can move time without sleeping.
public protocol KeywardClock: Sendable {
    func now() -> Date
}

public struct SystemClock: KeywardClock {
    public init() {}
    public func now() -> Date { Date() }
}
