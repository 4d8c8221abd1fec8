// The JSON value model KeywardJOSE parses into and serializes from (objects, arrays, strings, numbers, booleans, null).
public typealias JSONObject = [String: JSONValue]

/// A parsed JSON value. Numbers are kept as `Double`, which is exact for the integers JOSE uses
/// (timestamps, sizes) and is what every peer implementation does too.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var numberValue: Double? {
        if case .number(let n) = self { return n }
        return nil
    }

    /// Only for numbers with no fractional part that fit in Int64 exactly.
    public var intValue: Int64? {
        guard case .number(let n) = self, n.isFinite, n == n.rounded(.towardZero),
              abs(n) < 9_007_199_254_740_992 else { return nil }
        return Int64(n)
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension Dictionary where Key == String, Value == JSONValue {
    public func string(_ key: String) -> String? { self[key]?.stringValue }
    public func number(_ key: String) -> Double? { self[key]?.numberValue }
    public func int(_ key: String) -> Int64? { self[key]?.intValue }
    public func bool(_ key: String) -> Bool? { self[key]?.boolValue }
    public func object(_ key: String) -> JSONObject? { self[key]?.objectValue }
    public func array(_ key: String) -> [JSONValue]? { self[key]?.arrayValue }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject(minimumCapacity: elements.count)
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}
