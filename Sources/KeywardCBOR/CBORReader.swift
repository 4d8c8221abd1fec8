/// A strict, bounded CBOR (RFC 8949) reader for the small documents devices send: App Attest attestation and
/// assertion objects, and the items packed back to back in their authenticator data.
///
/// What it accepts, and what it decides:
/// - Major types 0-5 with definite lengths, and the simple values false, true and null. Indefinite lengths,
///   tags, floats, `undefined` and other simple values are refused: none of the formats read here uses them,
///   and every kind accepted is a kind a verifier must then think about.
/// - Arguments in any of their forms (immediate, 1, 2, 4 or 8 bytes), including longer forms than needed
///   ("non-minimal"). The signed parts of an attestation are hashed as the bytes received, so a longer head changes
///   nothing that is verified, while refusing it could refuse a real device whose encoder is not canonical.
/// - Map keys are integers, byte strings or text strings, each key once (compared as CBOR values: texts by their
///   UTF-8 bytes).
/// - Bounded: a length or count is checked against the bytes left before anything is allocated for it, nesting
///   of arrays and maps stops at `maximumDepth`, and a whole input (`decode`) is exactly one item.
public struct CBORReader: Sendable {
    /// Deep enough for any format read here (an attestation object nests three levels); a limit, not a need.
    public static let defaultMaximumDepth = 16

    public let bytes: [UInt8]
    public let maximumDepth: Int
    /// Where the next item starts.
    public private(set) var offset = 0

    public init(_ bytes: [UInt8], maximumDepth: Int = CBORReader.defaultMaximumDepth) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// The one item that is the whole of `bytes`.
    public static func decode(_ bytes: [UInt8], maximumDepth: Int = CBORReader.defaultMaximumDepth) throws(CBORError) -> CBORValue {
        var reader = CBORReader(bytes, maximumDepth: maximumDepth)
        let value = try reader.read()
        guard reader.isAtEnd else { throw CBORError(.trailingBytes, at: reader.offset) }
        return value
    }

    public var isAtEnd: Bool { offset == bytes.count }

    public var remainingCount: Int { bytes.count - offset }

    /// Reads the next item and moves past it; the next call reads the item right after it.
    public mutating func read() throws(CBORError) -> CBORValue {
        try readItem(enclosingContainers: 0)
    }

    private mutating func readItem(enclosingContainers: Int) throws(CBORError) -> CBORValue {
        let start = offset
        let initial = try readByte(itemStart: start)
        let majorType = initial >> 5
        let additional = initial & 0x1F
        if majorType == 7 { return try simpleValue(additional, itemStart: start) }
        if majorType == 6 { throw CBORError(.tag, at: start) }
        let argument = try readArgument(additional, itemStart: start)
        switch majorType {
        case 0:
            return .unsigned(argument)
        case 1:
            return .negative(argument)
        case 2:
            return .bytes(Array(try take(argument, itemStart: start)))
        case 3:
            guard let text = String(validating: try take(argument, itemStart: start), as: UTF8.self) else {
                throw CBORError(.invalidUTF8, at: start)
            }
            return .text(text)
        case 4:
            return .array(try readArray(count: argument, itemStart: start, enclosingContainers: enclosingContainers))
        default:
            return .map(try readMap(count: argument, itemStart: start, enclosingContainers: enclosingContainers))
        }
    }

    private mutating func readArray(count: UInt64, itemStart: Int, enclosingContainers: Int) throws(CBORError) -> [CBORValue] {
        guard enclosingContainers < maximumDepth else { throw CBORError(.tooDeep, at: itemStart) }
        // Every item takes at least one byte.
        guard count <= UInt64(remainingCount) else { throw CBORError(.lengthBeyondInput, at: itemStart) }
        var items: [CBORValue] = []
        items.reserveCapacity(Int(count))
        for _ in 0..<count {
            items.append(try readItem(enclosingContainers: enclosingContainers + 1))
        }
        return items
    }

    private mutating func readMap(count: UInt64, itemStart: Int, enclosingContainers: Int) throws(CBORError) -> [CBORMapEntry] {
        guard enclosingContainers < maximumDepth else { throw CBORError(.tooDeep, at: itemStart) }
        // Every entry takes at least two bytes.
        guard count <= UInt64(remainingCount / 2) else { throw CBORError(.lengthBeyondInput, at: itemStart) }
        var entries: [CBORMapEntry] = []
        entries.reserveCapacity(Int(count))
        var keys = Set<CBORValue>(minimumCapacity: Int(count))
        for _ in 0..<count {
            let keyStart = offset
            let key = try readItem(enclosingContainers: enclosingContainers + 1)
            switch key {
            case .unsigned, .negative, .bytes, .text: break
            default: throw CBORError(.unsupportedMapKey, at: keyStart)
            }
            guard keys.insert(key).inserted else { throw CBORError(.duplicateMapKey, at: keyStart) }
            entries.append(CBORMapEntry(key, try readItem(enclosingContainers: enclosingContainers + 1)))
        }
        return entries
    }

    private func simpleValue(_ additional: UInt8, itemStart: Int) throws(CBORError) -> CBORValue {
        switch additional {
        case 20: .bool(false)
        case 21: .bool(true)
        case 22: .null
        case 28...30: throw CBORError(.reservedAdditionalInformation, at: itemStart)
        case 31: throw CBORError(.indefiniteLength, at: itemStart)
        default: throw CBORError(.unsupportedSimpleValue, at: itemStart)
        }
    }

    /// The argument of an item head (RFC 8949 §3): the value itself below 24, else the big-endian integer in the
    /// 1, 2, 4 or 8 bytes that follow.
    private mutating func readArgument(_ additional: UInt8, itemStart: Int) throws(CBORError) -> UInt64 {
        let size: Int
        switch additional {
        case 0...23: return UInt64(additional)
        case 24: size = 1
        case 25: size = 2
        case 26: size = 4
        case 27: size = 8
        case 31: throw CBORError(.indefiniteLength, at: itemStart)
        default: throw CBORError(.reservedAdditionalInformation, at: itemStart)
        }
        guard remainingCount >= size else { throw CBORError(.truncated, at: itemStart) }
        var value: UInt64 = 0
        for byte in bytes[offset..<(offset + size)] {
            value = value << 8 | UInt64(byte)
        }
        offset += size
        return value
    }

    private mutating func readByte(itemStart: Int) throws(CBORError) -> UInt8 {
        guard offset < bytes.count else { throw CBORError(.truncated, at: itemStart) }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// The next `length` bytes, after checking that there are that many.
    private mutating func take(_ length: UInt64, itemStart: Int) throws(CBORError) -> ArraySlice<UInt8> {
        guard length <= UInt64(remainingCount) else { throw CBORError(.lengthBeyondInput, at: itemStart) }
        let end = offset + Int(length)
        defer { offset = end }
        return bytes[offset..<end]
    }
}
