/// A CBOR data item (RFC 8949) of the kinds `CBORReader` accepts: integers, byte and text strings, arrays, maps,
/// and the simple values false, true and null.
///
/// Equality is CBOR's, not Swift's: two texts are equal only when their UTF-8 bytes are (Swift's `String` would
/// call a precomposed "é" and "e" + U+0301 equal, and they are different map keys on the wire).
public enum CBORValue: Sendable {
    /// Major type 0: a non-negative integer.
    case unsigned(UInt64)
    /// Major type 1, stored as it is encoded: the value is -1 - n, so the whole range down to -2^64 fits.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    /// Entries in the order they were read. The reader guarantees unique keys; a map built by hand is the
    /// builder's responsibility.
    case map([CBORMapEntry])
    case bool(Bool)
    case null

    /// The integer as its own major type: `.unsigned` from 0 up, `.negative` below.
    public static func integer(_ value: Int64) -> CBORValue {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }
}

/// One key/value pair of a CBOR map.
public struct CBORMapEntry: Sendable, Hashable {
    public let key: CBORValue
    public let value: CBORValue

    public init(_ key: CBORValue, _ value: CBORValue) {
        self.key = key
        self.value = value
    }
}

// MARK: - Reading values

extension CBORValue {
    /// The integer value when it fits in `Int64`, whichever major type carries it.
    public var integerValue: Int64? {
        switch self {
        case .unsigned(let n): n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: nil
        }
    }

    public var bytesValue: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }

    public var textValue: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    public var arrayValue: [CBORValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    public var mapEntries: [CBORMapEntry]? {
        if case .map(let entries) = self { return entries }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The value under a text key of a map (nil for a missing key or a value that is not a map).
    public subscript(key: String) -> CBORValue? {
        self[.text(key)]
    }

    /// The value under an integer key of a map, as COSE keys are labelled (1, 3, -1, -2, -3).
    public subscript(key: Int) -> CBORValue? {
        self[.integer(Int64(key))]
    }

    /// The value under any key of a map.
    public subscript(key: CBORValue) -> CBORValue? {
        mapEntries?.first { $0.key == key }?.value
    }
}

// MARK: - CBOR equality

extension CBORValue: Hashable {
    public static func == (lhs: CBORValue, rhs: CBORValue) -> Bool {
        switch (lhs, rhs) {
        case (.unsigned(let a), .unsigned(let b)), (.negative(let a), .negative(let b)): a == b
        case (.bytes(let a), .bytes(let b)): a == b
        case (.text(let a), .text(let b)): a.utf8.elementsEqual(b.utf8)
        case (.array(let a), .array(let b)): a == b
        case (.map(let a), .map(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null): true
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .unsigned(let n):
            hasher.combine(0)
            hasher.combine(n)
        case .negative(let n):
            hasher.combine(1)
            hasher.combine(n)
        case .bytes(let bytes):
            hasher.combine(2)
            hasher.combine(bytes)
        case .text(let text):
            hasher.combine(3)
            hasher.combine(text.utf8.count)
            for byte in text.utf8 { hasher.combine(byte) }
        case .array(let items):
            hasher.combine(4)
            hasher.combine(items)
        case .map(let entries):
            hasher.combine(5)
            hasher.combine(entries)
        case .bool(let value):
            hasher.combine(7)
            hasher.combine(value)
        case .null:
            hasher.combine(8)
        }
    }
}
