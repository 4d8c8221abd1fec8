// SCIM 2.0 filters (RFC 7644 §3.4.2.2) as values: the attribute paths they name, their operators and literals, the
// limits a parse keeps, the one error type, and the canonical text each renders to.

/// `[URI ":"] ATTRNAME *1subAttr` (RFC 7644 §3.4.2.2, Figure 1; RFC 7643 §2.1): an attribute, optionally qualified
/// by the schema URN it belongs to, optionally narrowed to one sub-attribute of a complex attribute.
///
/// Names and schema URNs compare without regard to ASCII case (RFC 7643 §2.1: attribute names are case insensitive),
/// so `USERNAME` and `userName` are the same path; `description` renders them as they were written.
public struct SCIMAttributePath: Sendable, Hashable, CustomStringConvertible {
    /// The schema URN prefix as written, without the `:` that joins it to the attribute: e.g.
    /// `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User`.
    public var schema: String?
    /// The attribute, e.g. `emails` or `userName`.
    public var attribute: String
    /// The sub-attribute of a complex attribute: `value` in `emails.value`, `givenName` in `name.givenName`.
    public var subAttribute: String?

    public init(schema: String? = nil, attribute: String, subAttribute: String? = nil) {
        (self.schema, self.attribute, self.subAttribute) = (schema, attribute, subAttribute)
    }

    public var description: String {
        var text = schema.map { $0 + ":" } ?? ""
        text += attribute
        if let subAttribute { text += "." + subAttribute }
        return text
    }

    public static func == (left: Self, right: Self) -> Bool {
        SCIMName.equal(left.attribute, right.attribute) && SCIMName.equal(left.subAttribute, right.subAttribute)
            && SCIMName.equal(left.schema, right.schema)
    }

    public func hash(into hasher: inout Hasher) {
        for part in [schema, attribute, subAttribute] {
            hasher.combine(part.map(SCIMName.folded))
        }
    }
}

/// The attribute operators of RFC 7644 §3.4.2.2, Table 3, but `pr` (a presence test, `SCIMFilter.present`).
public enum SCIMCompareOperator: String, Sendable, CaseIterable {
    case eq, ne, co, sw, ew, gt, ge, lt, le

    /// `gt`, `ge`, `lt` and `le`: an ordering, which booleans and null do not have.
    public var isOrdering: Bool {
        switch self {
        case .gt, .ge, .lt, .le: true
        default: false
        }
    }

    /// `co`, `sw` and `ew`: a substring test, which only strings have.
    public var isSubstring: Bool {
        switch self {
        case .co, .sw, .ew: true
        default: false
        }
    }
}

/// `compValue = false / null / true / number / string` (RFC 7644 Figure 1), a JSON literal. A number keeps the text it
/// was written as (JSON number syntax), so a filter renders back exactly and no precision is lost before it is compared.
public enum SCIMFilterValue: Sendable, Equatable, CustomStringConvertible {
    case string(String)
    case number(String)
    case boolean(Bool)
    case null

    /// The JSON text: a string quoted and escaped as JSON, a number as written.
    public var description: String {
        switch self {
        case .string(let text): SCIMFilterValue.quoted(text)
        case .number(let text): text
        case .boolean(let value): value ? "true" : "false"
        case .null: "null"
        }
    }

    /// A JSON string literal: `"` and `\` escaped, control characters as their short escapes or `\u00XX`; everything
    /// else as it is.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case "\u{00}"..."\u{1F}":
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// A SCIM filter (RFC 7644 §3.4.2.2), as `SCIMFilter.parse` reads the `filter` query parameter or a search body's
/// `filter`, and as the `[...]` of a PATCH path (`SCIMPatchPath`). `description` is its canonical text, which parses
/// back to an equal filter.
public indirect enum SCIMFilter: Sendable, Equatable, CustomStringConvertible {
    /// `attrPath SP compareOp SP compValue`.
    case compare(SCIMAttributePath, SCIMCompareOperator, SCIMFilterValue)
    /// `attrPath SP "pr"`.
    case present(SCIMAttributePath)
    /// `"not" "(" FILTER ")"`.
    case not(SCIMFilter)
    case and(SCIMFilter, SCIMFilter)
    case or(SCIMFilter, SCIMFilter)
    /// `attrPath "[" valFilter "]"`: some value of a multi-valued attribute satisfies the filter, which names that
    /// value's sub-attributes (`emails[type eq "work" and value co "@example.com"]`). Never nested.
    case valuePath(SCIMAttributePath, SCIMFilter)

    /// Reads a filter. Every refusal is an `invalidFilter` error naming the problem and its byte offset.
    public static func parse(_ text: String, limits: SCIMFilterLimits = .default) throws(SCIMFilterError) -> SCIMFilter {
        var parser = try SCIMFilterParser(text, limits: limits, kind: .invalidFilter)
        return try parser.filter()
    }

    /// Lower-case operators and keywords, one space between tokens, strings as JSON, and parentheses only where the
    /// precedence of RFC 7644 §3.4.2.2 (`not` over `and` over `or`, Table 5) needs them: `a and (b or c)`, and a
    /// right operand of its own kind (`a or (b or c)`, since `a or b or c` reads as `(a or b) or c`).
    public var description: String {
        var text = ""
        render(into: &text)
        return text
    }

    private func render(into text: inout String) {
        switch self {
        case .compare(let path, let op, let value):
            text += "\(path) \(op.rawValue) \(value)"
        case .present(let path):
            text += "\(path) pr"
        case .not(let inner):
            text += "not ("
            inner.render(into: &text)
            text += ")"
        case .and(let left, let right), .or(let left, let right):
            left.render(operand: precedence, right: false, into: &text)
            text += precedence == Self.andPrecedence ? " and " : " or "
            right.render(operand: precedence, right: true, into: &text)
        case .valuePath(let path, let inner):
            text += "\(path)["
            inner.render(into: &text)
            text += "]"
        }
    }

    private func render(operand parent: Int, right: Bool, into text: inout String) {
        guard precedence < parent || (right && precedence == parent) else { return render(into: &text) }
        text += "("
        render(into: &text)
        text += ")"
    }

    private static let orPrecedence = 1
    private static let andPrecedence = 2

    private var precedence: Int {
        switch self {
        case .or: Self.orPrecedence
        case .and: Self.andPrecedence
        default: 3
        }
    }
}

/// What a parse accepts at most, so that a hostile filter costs little to refuse. Parsing is linear in the length and
/// recursive only to `maxDepth`, so no filter can exhaust the stack.
public struct SCIMFilterLimits: Sendable, Equatable {
    /// The longest text in UTF-8 bytes.
    public var maxLength: Int
    /// How deeply parentheses, `not` and value filters (`[...]`) may nest: `not (a pr)` and `emails[type pr]` are 1.
    /// At most `ceilingDepth` is honoured.
    public var maxDepth: Int
    /// The most comparisons and presence tests. At most `ceilingTerms` is honoured.
    public var maxTerms: Int

    /// What any limits are held to, whatever a caller sets: the parser recurses once per nesting level and the
    /// filters it builds are as deep as their terms, and both must stay far from the end of a thread's stack.
    public static let ceilingDepth = 64
    public static let ceilingTerms = 256

    public init(maxLength: Int = 4096, maxDepth: Int = 16, maxTerms: Int = 64) {
        (self.maxLength, self.maxDepth, self.maxTerms) = (maxLength, maxDepth, maxTerms)
    }

    public static let `default` = SCIMFilterLimits()
}

/// Why a filter or PATCH path was refused: its `kind` is the SCIM error type for the response (`scimType`, RFC 7644
/// §3.12, Table 9), its `message` says what was wrong and at which byte offset.
public struct SCIMFilterError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// A filter that does not follow RFC 7644 Figure 1 or compares what cannot be compared.
        case invalidFilter
        /// A PATCH `path` that does not follow RFC 7644 Figure 7.
        case invalidPath
    }

    public let kind: Kind
    public let message: String
    /// The byte offset in the UTF-8 text where the problem is (the text's length for a problem at its end).
    public let offset: Int

    public init(kind: Kind, message: String, offset: Int) {
        (self.kind, self.message, self.offset) = (kind, message, offset)
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}

/// ASCII case-insensitive comparison of names and schema URNs (RFC 7643 §2.1), without allocating for the usual case.
public enum SCIMName {
    public static func equal(_ left: String?, _ right: String?) -> Bool {
        switch (left, right) {
        case (nil, nil): true
        case (let left?, let right?): equal(left, right)
        default: false
        }
    }

    public static func equal(_ left: String, _ right: String) -> Bool {
        left.utf8.count == right.utf8.count && zip(left.utf8, right.utf8).allSatisfy { lower($0) == lower($1) }
    }

    public static func folded(_ name: String) -> String {
        String(decoding: name.utf8.map(lower), as: UTF8.self)
    }

    static func lower(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 0x20 : byte
    }
}
