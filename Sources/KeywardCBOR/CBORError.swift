/// Why `CBORReader` refused its input, and where.
public struct CBORError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rule that was broken. The raw values are stable: logs and callers' messages may quote them.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The input ends inside an item (its head, or an array or map missing items).
        case truncated = "truncated"
        /// A string length or an item count is larger than what is left of the input: refused before anything is
        /// allocated for it.
        case lengthBeyondInput = "length_beyond_input"
        /// Indefinite-length strings, arrays or maps, or a lone "break" byte (additional information 31).
        case indefiniteLength = "indefinite_length"
        /// Additional information 28, 29 or 30, which RFC 8949 leaves unassigned.
        case reservedAdditionalInformation = "reserved_additional_information"
        /// A tag (major type 6): none of the formats read here uses one.
        case tag = "tag"
        /// A float, `undefined`, or a simple value other than false, true and null.
        case unsupportedSimpleValue = "unsupported_simple_value"
        /// A text string that is not valid UTF-8.
        case invalidUTF8 = "invalid_utf8"
        /// A map key that is not an integer, a byte string or a text string.
        case unsupportedMapKey = "unsupported_map_key"
        /// The same key twice in one map: which one a reader keeps is where parsers disagree.
        case duplicateMapKey = "duplicate_map_key"
        /// Arrays and maps nested deeper than the reader's limit.
        case tooDeep = "too_deep"
        /// Bytes after the one item a whole input must hold.
        case trailingBytes = "trailing_bytes"
    }

    public let kind: Kind
    /// The offset in the reader's input of the item at fault (its initial byte); for `trailingBytes`, of the
    /// first byte after the item.
    public let offset: Int

    public init(_ kind: Kind, at offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    public var description: String { "CBOR \(kind.rawValue) at byte \(offset)" }
}
