/// Strict base64url (RFC 7515 §2 / RFC 4648 §5 without padding).
///
/// Strictness matters for signatures: if two encodings decode to the same bytes, a replay cache or a
/// log that keys on the text can be fooled, so padding, foreign characters and non-zero trailing bits are errors.
public enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// True when every character of `text` is in the alphabet: what an id, code or thumbprint written in this encoding
    /// may hold, checked before it is used as a name or a key.
    public static func isAlphabet(_ text: some StringProtocol) -> Bool {
        text.utf8.allSatisfy { reverse[Int($0)] != 0xFF }
    }

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = bytes.withContiguousStorageIfAvailable { encode(buffer: $0) }
        return input ?? Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    private static func encode(buffer: UnsafeBufferPointer<UInt8>) -> String {
        let count = buffer.count
        let outputCount = (count / 3) * 4 + [0, 2, 3][count % 3]
        return String(unsafeUninitializedCapacity: max(outputCount, 1)) { out in
            alphabet.withUnsafeBufferPointer { table in
                var i = 0, o = 0
                while i + 3 <= count {
                    let v = UInt32(buffer[i]) << 16 | UInt32(buffer[i + 1]) << 8 | UInt32(buffer[i + 2])
                    out[o] = table[Int(v >> 18 & 0x3F)]
                    out[o + 1] = table[Int(v >> 12 & 0x3F)]
                    out[o + 2] = table[Int(v >> 6 & 0x3F)]
                    out[o + 3] = table[Int(v & 0x3F)]
                    i += 3
                    o += 4
                }
                switch count - i {
                case 1:
                    let v = UInt32(buffer[i]) << 16
                    out[o] = table[Int(v >> 18 & 0x3F)]
                    out[o + 1] = table[Int(v >> 12 & 0x3F)]
                case 2:
                    let v = UInt32(buffer[i]) << 16 | UInt32(buffer[i + 1]) << 8
                    out[o] = table[Int(v >> 18 & 0x3F)]
                    out[o + 1] = table[Int(v >> 12 & 0x3F)]
                    out[o + 2] = table[Int(v >> 6 & 0x3F)]
                default:
                    break
                }
            }
            return outputCount
        }
    }

    public static func decode(_ string: some StringProtocol) throws(JOSEError) -> [UInt8] {
        let utf8 = string.utf8
        let result = utf8.withContiguousStorageIfAvailable { decode(buffer: $0) }
            ?? Array(utf8).withUnsafeBufferPointer { decode(buffer: $0) }
        return try result.get()
    }

    static func decode(buffer: UnsafeBufferPointer<UInt8>) -> Result<[UInt8], JOSEError> {
        let count = buffer.count
        guard count % 4 != 1 else {
            return .failure(JOSEError(.badBase64URL, "base64url text has an impossible length \(count)"))
        }
        var output = [UInt8]()
        output.reserveCapacity(count * 3 / 4)
        return reverse.withUnsafeBufferPointer { table -> Result<[UInt8], JOSEError> in
            var accumulator: UInt32 = 0
            var bits = 0
            for index in 0..<count {
                let value = table[Int(buffer[index])]
                guard value != 0xFF else {
                    let what = buffer[index] == UInt8(ascii: "=") ? "padding '='" : "a character outside [A-Za-z0-9_-]"
                    return .failure(JOSEError(.badBase64URL, "base64url text contains \(what) at offset \(index)"))
                }
                accumulator = accumulator << 6 | UInt32(value)
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                    accumulator &= (1 << UInt32(bits)) - 1
                }
            }
            guard accumulator == 0 else {
                return .failure(JOSEError(.badBase64URL, "base64url text has non-zero trailing bits"))
            }
            return .success(output)
        }
    }
}
