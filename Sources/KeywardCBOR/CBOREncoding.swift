// Writing a CBOR value back out in preferred serialization, for test objects and fuzzer round trips.
extension CBORValue {
    /// The value in CBOR's preferred serialization (RFC 8949 §4.2.1: every argument in its shortest form), map
    /// entries in their order. Used to build test objects and by the fuzzer's round trip: decoding the result gives
    /// this value back.
    public var encoded: [UInt8] {
        var output: [UInt8] = []
        encode(into: &output)
        return output
    }

    private func encode(into output: inout [UInt8]) {
        switch self {
        case .unsigned(let n):
            Self.head(majorType: 0, argument: n, into: &output)
        case .negative(let n):
            Self.head(majorType: 1, argument: n, into: &output)
        case .bytes(let bytes):
            Self.head(majorType: 2, argument: UInt64(bytes.count), into: &output)
            output += bytes
        case .text(let text):
            Self.head(majorType: 3, argument: UInt64(text.utf8.count), into: &output)
            output += text.utf8
        case .array(let items):
            Self.head(majorType: 4, argument: UInt64(items.count), into: &output)
            for item in items { item.encode(into: &output) }
        case .map(let entries):
            Self.head(majorType: 5, argument: UInt64(entries.count), into: &output)
            for entry in entries {
                entry.key.encode(into: &output)
                entry.value.encode(into: &output)
            }
        case .bool(let value):
            output.append(value ? 0xF5 : 0xF4)
        case .null:
            output.append(0xF6)
        }
    }

    private static func head(majorType: UInt8, argument: UInt64, into output: inout [UInt8]) {
        let type = majorType << 5
        let size: Int
        switch argument {
        case 0..<24:
            output.append(type | UInt8(argument))
            return
        case 24...0xFF:
            output.append(type | 24)
            size = 1
        case 0x100...0xFFFF:
            output.append(type | 25)
            size = 2
        case 0x1_0000...0xFFFF_FFFF:
            output.append(type | 26)
            size = 4
        default:
            output.append(type | 27)
            size = 8
        }
        for index in stride(from: size - 1, through: 0, by: -1) {
            output.append(UInt8(truncatingIfNeeded: argument >> (8 * UInt64(index))))
        }
    }
}
