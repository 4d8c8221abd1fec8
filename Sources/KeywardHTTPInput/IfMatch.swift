// The If-Match request header (RFC 9110 §13.1.1): which current representations an update may replace.

/// A parsed `If-Match`: `*` (any current representation) or a list of entity tags. Weak tags never match
/// (If-Match compares strongly, RFC 9110 §8.8.3.2), but they parse, so a client that sends one gets 412, not 400.
public enum IfMatch: Sendable, Equatable {
    case any
    case tags([EntityTag])

    public struct EntityTag: Sendable, Equatable {
        public var weak: Bool
        /// Between the quotes.
        public var opaque: String

        public init(weak: Bool, opaque: String) {
            (self.weak, self.opaque) = (weak, opaque)
        }
    }

    /// The longest header read; a longer one is refused rather than scanned.
    public static let maxLength = 4096

    /// The header's values (a field may be repeated; the lists are joined); nil when it is absent. Throws on a
    /// malformed value, which RFC 9110 leaves to the server: answered as a bad request.
    public static func parse(_ values: [String]) throws(IfMatchError) -> IfMatch? {
        guard !values.isEmpty else { return nil }
        let text = values.joined(separator: ",")
        guard text.utf8.count <= maxLength else { throw IfMatchError("If-Match is longer than \(maxLength) bytes") }
        if text.trimmingSpaces == "*" { return .any }
        var tags: [EntityTag] = []
        var bytes = Substring(text).utf8[...]
        while true {
            bytes = bytes.drop { $0 == 0x20 || $0 == 0x09 }
            if bytes.isEmpty { break }
            if bytes.first == UInt8(ascii: ",") {
                bytes = bytes.dropFirst()
                continue
            }
            var weak = false
            if bytes.starts(with: "W/".utf8) {
                weak = true
                bytes = bytes.dropFirst(2)
            }
            guard bytes.first == UInt8(ascii: "\"") else { throw IfMatchError("If-Match must be * or a list of quoted entity tags") }
            bytes = bytes.dropFirst()
            // etagc = %x21 / %x23-7E / obs-text (RFC 9110 §8.8.3)
            let opaque = bytes.prefix { $0 == 0x21 || (0x23...0x7E).contains($0) || $0 >= 0x80 }
            bytes = bytes.dropFirst(opaque.count)
            guard bytes.first == UInt8(ascii: "\"") else { throw IfMatchError("an entity tag in If-Match is not closed by a quote") }
            bytes = bytes.dropFirst()
            tags.append(EntityTag(weak: weak, opaque: String(decoding: opaque, as: UTF8.self)))
            bytes = bytes.drop { $0 == 0x20 || $0 == 0x09 }
            guard bytes.isEmpty || bytes.first == UInt8(ascii: ",") else { throw IfMatchError("entity tags in If-Match must be separated by commas") }
        }
        guard !tags.isEmpty else { throw IfMatchError("If-Match is empty") }
        return .tags(tags)
    }

    /// Whether a representation whose strong tag is `opaque` satisfies the condition.
    public func matches(_ opaque: String) -> Bool {
        switch self {
        case .any: true
        case .tags(let tags): tags.contains { !$0.weak && $0.opaque == opaque }
        }
    }
}

public struct IfMatchError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension String {
    fileprivate var trimmingSpaces: Substring {
        let utf8 = Substring(self).utf8
        let start = utf8.firstIndex { $0 != 0x20 && $0 != 0x09 } ?? utf8.endIndex
        let end = utf8.lastIndex { $0 != 0x20 && $0 != 0x09 }.map { utf8.index(after: $0) } ?? start
        return Substring(utf8[start..<end])
    }
}
