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

/// Where outbound clients read the time (token lifetimes, `iat`): push senders, Google's token source; tests pass a
/// controllable one.
public typealias CurrentDate = @Sendable () -> Date
