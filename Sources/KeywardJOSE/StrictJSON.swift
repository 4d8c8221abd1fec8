/// A strict RFC 8259 parser and a canonical-ish serializer.
///
/// Why our own: Foundation's decoder silently keeps the first of duplicate members while other stacks keep the
/// last, so two verifiers could read different claims out of the same signed bytes (RFC 7515 §4 requires
/// rejecting or using the last; we reject, at every depth).
public enum StrictJSON {
    public static let maxDepth = 32

    public static func parseObject(_ bytes: some Collection<UInt8>) throws(JOSEError) -> JSONObject {
        guard case .object(let object) = try parse(bytes) else {
            throw JOSEError(.badJSON, "JSON text is not an object")
        }
        return object
    }

    public static func parse(_ bytes: some Collection<UInt8>) throws(JOSEError) -> JSONValue {
        let result = bytes.withContiguousStorageIfAvailable { buffer in parseBuffer(buffer) }
            ?? Array(bytes).withUnsafeBufferPointer { buffer in parseBuffer(buffer) }
        return try result.get()
    }

    private static func parseBuffer(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, JOSEError> {
        var parser = JSONParser(buffer: buffer)
        do throws(JOSEError) {
            return .success(try parser.parseDocument())
        } catch {
            return .failure(error)
        }
    }

    /// Compact, members sorted by UTF-8 bytes, integral numbers below 2^53 without a fraction.
    /// Sorted output makes RFC 7638 thumbprints fall out directly and keeps signed headers reproducible.
    public static func serialize(_ object: JSONObject) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        JSONWriter.write(object: object, into: &out)
        return out
    }

    public static func serialize(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        JSONWriter.write(value, into: &out)
        return out
    }
}

private enum ASCII {
    static let quote: UInt8 = 0x22, backslash: UInt8 = 0x5C, slash: UInt8 = 0x2F
    static let openBrace: UInt8 = 0x7B, closeBrace: UInt8 = 0x7D
    static let openBracket: UInt8 = 0x5B, closeBracket: UInt8 = 0x5D
    static let colon: UInt8 = 0x3A, comma: UInt8 = 0x2C, minus: UInt8 = 0x2D, plus: UInt8 = 0x2B
    static let dot: UInt8 = 0x2E, zero: UInt8 = 0x30, nine: UInt8 = 0x39
    static let lowerE: UInt8 = 0x65, upperE: UInt8 = 0x45
}

private struct JSONParser {
    let buffer: UnsafeBufferPointer<UInt8>
    var pos = 0
    var depth = 0

    init(buffer: UnsafeBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    private func fail(_ what: String) -> JOSEError {
        JOSEError(.badJSON, "\(what) at offset \(pos)")
    }

    mutating func parseDocument() throws(JOSEError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard pos == buffer.count else { throw fail("trailing data after JSON value") }
        return value
    }

    private mutating func skipWhitespace() {
        while pos < buffer.count {
            switch buffer[pos] {
            case 0x20, 0x0A, 0x0D, 0x09: pos += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(JOSEError) -> JSONValue {
        guard pos < buffer.count else { throw fail("unexpected end of input") }
        switch buffer[pos] {
        case ASCII.openBrace: return .object(try parseObject())
        case ASCII.openBracket: return .array(try parseArray())
        case ASCII.quote: return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case ASCII.minus, ASCII.zero...ASCII.nine: return .number(try parseNumber())
        default: throw fail("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JOSEError) {
        let count = literal.utf8CodeUnitCount
        guard buffer.count - pos >= count else { throw fail("truncated literal") }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for i in 0..<count where buffer[pos + i] != expected[i] {
            throw fail("invalid literal")
        }
        pos += count
    }

    private mutating func enter() throws(JOSEError) {
        depth += 1
        guard depth <= StrictJSON.maxDepth else {
            throw fail("JSON nested deeper than \(StrictJSON.maxDepth) levels")
        }
    }

    private mutating func parseObject() throws(JOSEError) -> JSONObject {
        try enter()
        pos += 1
        var object = JSONObject()
        skipWhitespace()
        if pos < buffer.count, buffer[pos] == ASCII.closeBrace {
            pos += 1
            depth -= 1
            return object
        }
        while true {
            skipWhitespace()
            guard pos < buffer.count, buffer[pos] == ASCII.quote else { throw fail("expected member name") }
            let key = try parseString()
            skipWhitespace()
            guard pos < buffer.count, buffer[pos] == ASCII.colon else { throw fail("expected ':'") }
            pos += 1
            skipWhitespace()
            let value = try parseValue()
            if object.updateValue(value, forKey: key) != nil {
                throw JOSEError(.duplicateMember, "duplicate JSON member \"\(displayable(key))\"")
            }
            skipWhitespace()
            guard pos < buffer.count else { throw fail("unterminated object") }
            if buffer[pos] == ASCII.comma {
                pos += 1
            } else if buffer[pos] == ASCII.closeBrace {
                pos += 1
                depth -= 1
                return object
            } else {
                throw fail("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray() throws(JOSEError) -> [JSONValue] {
        try enter()
        pos += 1
        var array: [JSONValue] = []
        skipWhitespace()
        if pos < buffer.count, buffer[pos] == ASCII.closeBracket {
            pos += 1
            depth -= 1
            return array
        }
        while true {
            skipWhitespace()
            array.append(try parseValue())
            skipWhitespace()
            guard pos < buffer.count else { throw fail("unterminated array") }
            if buffer[pos] == ASCII.comma {
                pos += 1
            } else if buffer[pos] == ASCII.closeBracket {
                pos += 1
                depth -= 1
                return array
            } else {
                throw fail("expected ',' or ']'")
            }
        }
    }

    private mutating func parseString() throws(JOSEError) -> String {
        pos += 1
        let start = pos
        // Fast path: most JOSE strings (base64url, URLs, claim names) have no escapes.
        while pos < buffer.count {
            let byte = buffer[pos]
            if byte == ASCII.quote {
                let slice = UnsafeBufferPointer(rebasing: buffer[start..<pos])
                pos += 1
                return try validatedString(slice)
            }
            if byte == ASCII.backslash { break }
            if byte < 0x20 { throw fail("unescaped control character in string") }
            pos += 1
        }
        var bytes = Array(buffer[start..<pos])
        while pos < buffer.count {
            let byte = buffer[pos]
            switch byte {
            case ASCII.quote:
                pos += 1
                return try validatedString(bytes)
            case ASCII.backslash:
                pos += 1
                try parseEscape(into: &bytes)
            case 0..<0x20:
                throw fail("unescaped control character in string")
            default:
                bytes.append(byte)
                pos += 1
            }
        }
        throw fail("unterminated string")
    }

    private func validatedString(_ bytes: some Sequence<UInt8>) throws(JOSEError) -> String {
        // Swift's validator rejects overlong forms and encoded surrogates, as RFC 3629 requires.
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw fail("string is not valid UTF-8")
        }
        return string
    }

    private mutating func parseEscape(into bytes: inout [UInt8]) throws(JOSEError) {
        guard pos < buffer.count else { throw fail("unterminated escape") }
        let byte = buffer[pos]
        pos += 1
        switch byte {
        case ASCII.quote, ASCII.backslash, ASCII.slash: bytes.append(byte)
        case UInt8(ascii: "b"): bytes.append(0x08)
        case UInt8(ascii: "f"): bytes.append(0x0C)
        case UInt8(ascii: "n"): bytes.append(0x0A)
        case UInt8(ascii: "r"): bytes.append(0x0D)
        case UInt8(ascii: "t"): bytes.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHex4()
            var scalarValue = UInt32(unit)
            if (0xD800...0xDBFF).contains(unit) {
                guard buffer.count - pos >= 6, buffer[pos] == ASCII.backslash, buffer[pos + 1] == UInt8(ascii: "u")
                else { throw fail("lone high surrogate") }
                pos += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw fail("high surrogate not followed by low surrogate") }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw fail("lone low surrogate")
            }
            guard let scalar = Unicode.Scalar(scalarValue) else { throw fail("invalid unicode escape") }
            bytes.append(contentsOf: UTF8.encode(scalar)!)
        default:
            throw fail("invalid escape")
        }
    }

    private mutating func parseHex4() throws(JOSEError) -> UInt16 {
        guard buffer.count - pos >= 4 else { throw fail("truncated \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = buffer[pos]
            let digit: UInt8
            switch byte {
            case ASCII.zero...ASCII.nine: digit = byte - ASCII.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail("invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt16(digit)
            pos += 1
        }
        return value
    }

    private func isDigit(_ index: Int) -> Bool {
        index < buffer.count && buffer[index] >= ASCII.zero && buffer[index] <= ASCII.nine
    }

    private mutating func parseNumber() throws(JOSEError) -> Double {
        let start = pos
        var integral = true
        if buffer[pos] == ASCII.minus { pos += 1 }
        guard isDigit(pos) else { throw fail("invalid number") }
        if buffer[pos] == ASCII.zero {
            pos += 1
        } else {
            while isDigit(pos) { pos += 1 }
        }
        if pos < buffer.count, buffer[pos] == ASCII.dot {
            integral = false
            pos += 1
            guard isDigit(pos) else { throw fail("invalid number fraction") }
            while isDigit(pos) { pos += 1 }
        }
        if pos < buffer.count, buffer[pos] == ASCII.lowerE || buffer[pos] == ASCII.upperE {
            integral = false
            pos += 1
            if pos < buffer.count, buffer[pos] == ASCII.plus || buffer[pos] == ASCII.minus { pos += 1 }
            guard isDigit(pos) else { throw fail("invalid number exponent") }
            while isDigit(pos) { pos += 1 }
        }
        let slice = buffer[start..<pos]
        if integral && slice.count <= 16 {
            var negative = false
            var value: Int64 = 0
            for byte in slice {
                if byte == ASCII.minus { negative = true } else { value = value * 10 + Int64(byte - ASCII.zero) }
            }
            return negative ? -Double(value) : Double(value)
        }
        guard let value = Double(String(decoding: slice, as: UTF8.self)), value.isFinite else {
            throw fail("number out of range")
        }
        return value
    }
}

/// Keeps error messages readable when a member name is huge or contains control characters.
package func displayable(_ text: String, limit: Int = 64) -> String {
    var out = ""
    for scalar in text.unicodeScalars.prefix(limit) {
        out.unicodeScalars.append(scalar.value < 0x20 || scalar.value == 0x7F ? "?" : scalar)
    }
    if text.unicodeScalars.count > limit { out += "…" }
    return out
}

enum JSONWriter {
    static func write(object: JSONObject, into out: inout [UInt8]) {
        out.append(ASCII.openBrace)
        let keys = object.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var first = true
        for key in keys {
            if !first { out.append(ASCII.comma) }
            first = false
            write(string: key, into: &out)
            out.append(ASCII.colon)
            write(object[key]!, into: &out)
        }
        out.append(ASCII.closeBrace)
    }

    static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): write(number: n, into: &out)
        case .string(let s): write(string: s, into: &out)
        case .object(let o): write(object: o, into: &out)
        case .array(let a):
            out.append(ASCII.openBracket)
            for (i, element) in a.enumerated() {
                if i > 0 { out.append(ASCII.comma) }
                write(element, into: &out)
            }
            out.append(ASCII.closeBracket)
        }
    }

    static func write(number: Double, into out: inout [UInt8]) {
        guard number.isFinite else {
            out.append(contentsOf: "null".utf8)
            return
        }
        if number == number.rounded(.towardZero), abs(number) < 9_007_199_254_740_992 {
            write(integer: Int64(number), into: &out)
        } else {
            out.append(contentsOf: String(number).utf8)
        }
    }

    /// Digits straight into `out` (every token carries `iat` and `exp`; a String per number was measurable).
    static func write(integer: Int64, into out: inout [UInt8]) {
        if integer < 0 { out.append(ASCII.minus) }
        var magnitude = integer.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = ASCII.zero + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: buffer[start...])
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Whether a byte must be escaped inside a JSON string (RFC 8259 §7): quote, backslash, control characters.
    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == ASCII.quote || byte == ASCII.backslash
    }

    static func write(string: String, into out: inout [UInt8]) {
        out.append(ASCII.quote)
        // Tokens, ids and URLs have nothing to escape: their bytes are copied in one go.
        var string = string
        let copied = string.withUTF8 { bytes -> Bool in
            guard !bytes.contains(where: needsEscape) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if !copied {
            for byte in string.utf8 {
                switch byte {
                case ASCII.quote: out.append(ASCII.backslash); out.append(ASCII.quote)
                case ASCII.backslash: out.append(ASCII.backslash); out.append(ASCII.backslash)
                case 0x0A: out.append(ASCII.backslash); out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(ASCII.backslash); out.append(UInt8(ascii: "r"))
                case 0x09: out.append(ASCII.backslash); out.append(UInt8(ascii: "t"))
                case 0..<0x20:
                    out.append(contentsOf: "\\u00".utf8)
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 0xF)])
                default: out.append(byte)
                }
            }
        }
        out.append(ASCII.quote)
    }
}
