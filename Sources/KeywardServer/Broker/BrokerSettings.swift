// Per-realm broker settings: how long a delegation lasts and how long a hand-off waits.
import Foundation
import KeywardJOSE

/// What a realm decides about its broker (`keyward broker settings --realm R KEY=VALUE`), stored as one JSON object
/// per realm. Unknown keys in a stored object are ignored, so a newer node's settings do not stop an older one.
public struct BrokerSettings: RealmSettingsValue {
    /// How long a delegation lets the app get tokens without the person, in days: 1 to 30.
    public var delegationLifetimeDays = 30
    /// How long a hand-off waits to be taken, in seconds: 10 to 300.
    public var handoffLifetimeSeconds = 120

    public static let keys = ["delegationLifetimeDays", "handoffLifetimeSeconds"]
    public static let delegationDays = 1...30
    public static let handoffSeconds = 10...300

    public init() {}

    public var delegationLifetime: TimeInterval { TimeInterval(delegationLifetimeDays) * 86400 }
    public var handoffLifetime: TimeInterval { TimeInterval(handoffLifetimeSeconds) }

    /// Sets `key` from its text; the error names the key and what it accepts.
    public mutating func apply(_ key: String, _ value: String) throws(BrokerSettingsError) {
        func number(_ range: ClosedRange<Int>) throws(BrokerSettingsError) -> Int {
            guard let number = Int(value), range.contains(number) else { throw BrokerSettingsError(key: key, expected: "a whole number from \(range.lowerBound) to \(range.upperBound)") }
            return number
        }
        switch key {
        case "delegationLifetimeDays": delegationLifetimeDays = try number(Self.delegationDays)
        case "handoffLifetimeSeconds": handoffLifetimeSeconds = try number(Self.handoffSeconds)
        default: throw BrokerSettingsError(key: key, expected: "one of \(Self.keys.joined(separator: ", "))")
        }
    }

    public var jsonObject: JSONObject {
        ["delegationLifetimeDays": .number(Double(delegationLifetimeDays)), "handoffLifetimeSeconds": .number(Double(handoffLifetimeSeconds))]
    }

    /// A stored object; a value out of its range (written by hand, or under other limits) falls back to the default.
    public init(json: JSONObject) {
        if let days = json["delegationLifetimeDays"]?.intValue.map(Int.init), Self.delegationDays.contains(days) { delegationLifetimeDays = days }
        if let seconds = json["handoffLifetimeSeconds"]?.intValue.map(Int.init), Self.handoffSeconds.contains(seconds) { handoffLifetimeSeconds = seconds }
    }
}

public struct BrokerSettingsError: Error, CustomStringConvertible, Equatable {
    public let key: String
    public let expected: String

    public var description: String { "broker setting '\(key)': expected \(expected)" }
}
