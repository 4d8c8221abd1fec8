import KeywardHTTPInput

/// Text checks for hot request paths. Foundation's CharacterSet is slow on Linux, and tokens are long; these
/// look at scalars directly.
extension Unicode.Scalar {
    /// Java's `Character.isISOControl`, which the original's input validators use: U+0000–U+001F and U+007F–U+009F.
    var isISOControl: Bool { value < 0x20 || (0x7F...0x9F).contains(value) }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmingBlanks: SubSequence {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else { return self[endIndex...] }
        return self[first...last]
    }

    /// Empty or only spaces and tabs.
    var isBlank: Bool { allSatisfy { $0 == " " || $0 == "\t" } }

    var containsISOControl: Bool { unicodeScalars.contains { $0.isISOControl } }
}

extension String {
    /// Every byte but RFC 3986's unreserved characters (`A–Z a–z 0–9 - . _ ~`) percent-encoded, as UTF-8.
    var percentEncodedUnreserved: String { FormBody.encodeComponent(self) }
}

extension String {
    /// `application/x-www-form-urlencoded` (request bodies and query strings): names and values with everything but
    /// RFC 3986's unreserved characters percent-encoded, joined by `=` and `&`.
    static func formEncoded(_ pairs: [(String, String)]) -> String { FormBody.encode(pairs) }

    /// The comma-separated items, each without leading and trailing spaces and tabs, empty ones kept. Read as UTF-8
    /// bytes: a DPoP proof is some 700 of them, and splitting it as Characters was 3 % of a token request's CPU.
    var commaSeparatedItems: [String] {
        let bytes = utf8
        let isBlank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        var items: [String] = []
        var start = bytes.startIndex
        while true {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: ",")) ?? bytes.endIndex
            var (lower, upper) = (start, end)
            while lower < upper, isBlank(bytes[lower]) { lower = bytes.index(after: lower) }
            while upper > lower, isBlank(bytes[bytes.index(before: upper)]) { upper = bytes.index(before: upper) }
            items.append(String(decoding: bytes[lower..<upper], as: UTF8.self))
            guard end < bytes.endIndex else { return items }
            start = bytes.index(after: end)
        }
    }
}
