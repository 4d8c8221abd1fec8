// Reads SCIM filters and PATCH paths byte by byte (RFC 7644 Figure 1 and Figure 7): recursive descent that recurses
// only into parentheses, `not` and `[...]`, each counted against the depth limit, and never backtracks.

/// One parse of one text. `kind` is the error type every refusal carries: `invalidFilter` for a filter,
/// `invalidPath` for a PATCH path.
struct SCIMFilterParser {
    private let bytes: [UInt8]
    private let kind: SCIMFilterError.Kind
    private let maxDepth: Int
    private let maxTerms: Int
    private var position = 0
    private var terms = 0

    init(_ text: String, limits: SCIMFilterLimits, kind: SCIMFilterError.Kind) throws(SCIMFilterError) {
        (self.kind, maxDepth, maxTerms) = (kind, min(limits.maxDepth, SCIMFilterLimits.ceilingDepth), min(limits.maxTerms, SCIMFilterLimits.ceilingTerms))
        let length = text.utf8.count
        guard length <= limits.maxLength else {
            let what = kind == .invalidPath ? "path" : "filter"
            let offset = max(0, limits.maxLength)
            throw SCIMFilterError(kind: kind, message: "\(what) is \(length) bytes, longer than \(limits.maxLength) at \(offset)", offset: offset)
        }
        bytes = Array(text.utf8)
    }

    // MARK: - Filters

    /// The whole text as one filter; spaces around it are allowed.
    mutating func filter() throws(SCIMFilterError) -> SCIMFilter {
        skipSpaces()
        guard position < bytes.count else { throw failure("empty filter", at: position) }
        let filter = try orExpression(depth: 0, inValuePath: false)
        skipSpaces()
        guard position == bytes.count else { throw unexpected(expecting: "'and', 'or' or the end") }
        return filter
    }

    /// `FILTER SP "or" SP FILTER`, the loosest binding (RFC 7644 §3.4.2.2: `and` takes precedence over `or`), read
    /// left to right: `a or b or c` is `(a or b) or c`.
    private mutating func orExpression(depth: Int, inValuePath: Bool) throws(SCIMFilterError) -> SCIMFilter {
        var filter = try andExpression(depth: depth, inValuePath: inValuePath)
        while try logicalOperator("or") {
            filter = .or(filter, try andExpression(depth: depth, inValuePath: inValuePath))
        }
        return filter
    }

    private mutating func andExpression(depth: Int, inValuePath: Bool) throws(SCIMFilterError) -> SCIMFilter {
        var filter = try factor(depth: depth, inValuePath: inValuePath)
        while try logicalOperator("and") {
            filter = .and(filter, try factor(depth: depth, inValuePath: inValuePath))
        }
        return filter
    }

    /// Spaces, `word` (any case) and spaces: consumed and true if they are next, otherwise nothing is consumed.
    private mutating func logicalOperator(_ word: String) throws(SCIMFilterError) -> Bool {
        let start = position
        skipSpaces()
        guard position > start, matchesWord(word) else {
            position = start
            return false
        }
        position += word.utf8.count
        guard position < bytes.count else { throw failure("expected a filter after '\(word)'", at: position) }
        guard skipSpaces() > 0 else { throw failure("expected a space after '\(word)'", at: position) }
        return true
    }

    /// A group, a negation, a value filter or an attribute expression.
    private mutating func factor(depth: Int, inValuePath: Bool) throws(SCIMFilterError) -> SCIMFilter {
        guard position < bytes.count else { throw failure("expected a filter, found the end", at: position) }
        if bytes[position] == UInt8(ascii: "(") {
            return try group(depth: depth, inValuePath: inValuePath)
        }
        let start = position
        let token = pathToken()
        guard !token.isEmpty else {
            throw failure("expected an attribute name, '(' or 'not', found \(describe(at: position))", at: position)
        }
        // `not` is always the keyword here: an attribute called "not" can only be named with a sub-attribute or URN.
        if SCIMName.equal(token, "not") {
            try enter(depth + 1, at: start)
            skipSpaces()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "(") else {
                throw failure("'not' must be followed by a filter in parentheses", at: position)
            }
            return .not(try group(depth: depth, inValuePath: inValuePath, counted: true))
        }
        let path = try attributePath(token, at: start)
        if position < bytes.count, bytes[position] == UInt8(ascii: "[") {
            guard !inValuePath else { throw failure("a value filter cannot contain another value filter", at: position) }
            return .valuePath(path, try valueFilter(of: path, depth: depth))
        }
        return try attributeExpression(path, at: start)
    }

    /// `"(" FILTER ")"` at the current position; `counted` when `not` already took the nesting level.
    private mutating func group(depth: Int, inValuePath: Bool, counted: Bool = false) throws(SCIMFilterError) -> SCIMFilter {
        let open = position
        if !counted { try enter(depth + 1, at: open) }
        position += 1
        skipSpaces()
        let inner = try orExpression(depth: depth + 1, inValuePath: inValuePath)
        skipSpaces()
        guard position < bytes.count else { throw failure("'(' without its ')'", at: open) }
        guard bytes[position] == UInt8(ascii: ")") else { throw unexpected(expecting: "'and', 'or' or ')'") }
        position += 1
        return inner
    }

    /// `"[" valFilter "]"` after `path`: a filter on the values of a multi-valued attribute, which names their
    /// sub-attributes and holds no value filter of its own.
    private mutating func valueFilter(of path: SCIMAttributePath, depth: Int) throws(SCIMFilterError) -> SCIMFilter {
        let open = position
        guard path.subAttribute == nil else {
            throw failure("a value filter applies to a multi-valued attribute, not to the sub-attribute '\(path)'", at: open)
        }
        try enter(depth + 1, at: open)
        position += 1
        skipSpaces()
        let inner = try orExpression(depth: depth + 1, inValuePath: true)
        skipSpaces()
        guard position < bytes.count else { throw failure("'[' without its ']'", at: open) }
        guard bytes[position] == UInt8(ascii: "]") else { throw unexpected(expecting: "'and', 'or' or ']'") }
        position += 1
        return inner
    }

    /// `attrPath SP "pr"` or `attrPath SP compareOp SP compValue`, the path already read.
    private mutating func attributeExpression(_ path: SCIMAttributePath, at start: Int) throws(SCIMFilterError) -> SCIMFilter {
        guard skipSpaces() > 0, position < bytes.count else {
            throw failure("expected an operator after '\(path)', found \(describe(at: position))", at: position)
        }
        let operatorStart = position
        let word = self.word()
        guard !word.isEmpty else { throw failure("expected an operator after '\(path)', found \(describe(at: position))", at: position) }
        try countTerm(at: start)
        if SCIMName.equal(word, "pr") {
            let afterOperator = position
            skipSpaces()
            if position < bytes.count, position > afterOperator, startsValue(bytes[position]) {
                throw failure("'pr' takes no value", at: position)
            }
            position = afterOperator
            return .present(path)
        }
        guard let op = SCIMCompareOperator.allCases.first(where: { SCIMName.equal(word, $0.rawValue) }) else {
            throw failure("unknown operator '\(Self.clipped(word))'", at: operatorStart)
        }
        guard skipSpaces() > 0, position < bytes.count else {
            throw failure("expected a value after '\(op.rawValue)', found \(describe(at: position))", at: position)
        }
        let valueStart = position
        let value = try self.value(after: op)
        switch value {
        case .boolean, .null:
            // RFC 7644 §3.4.2.2, Table 3: booleans (and null, which has no order either) cannot be ordered.
            if op.isOrdering { throw failure("'\(op.rawValue)' cannot compare with \(value)", at: valueStart) }
            if op.isSubstring { throw failure("'\(op.rawValue)' compares strings only, found \(value)", at: valueStart) }
        case .number:
            if op.isSubstring { throw failure("'\(op.rawValue)' compares strings only, found \(value)", at: valueStart) }
        case .string:
            break
        }
        return .compare(path, op, value)
    }

    // MARK: - Values

    /// `compValue`: a JSON string, number, `true`, `false` or `null` (the literals in any case).
    private mutating func value(after op: SCIMCompareOperator) throws(SCIMFilterError) -> SCIMFilterValue {
        let start = position
        switch bytes[position] {
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try number())
        default:
            let word = self.word()
            if SCIMName.equal(word, "true") { return .boolean(true) }
            if SCIMName.equal(word, "false") { return .boolean(false) }
            if SCIMName.equal(word, "null") { return .null }
            let found = word.isEmpty ? describe(at: start) : "'\(Self.clipped(word))' (a string needs double quotes)"
            throw failure("expected a value after '\(op.rawValue)', found \(found)", at: start)
        }
    }

    /// A JSON string (RFC 8259 §7): escapes decoded, raw control characters, unknown escapes and unpaired surrogates
    /// refused. NUL is refused too, escaped or not: no attribute holds it and PostgreSQL text cannot.
    private mutating func string() throws(SCIMFilterError) -> String {
        let open = position
        position += 1
        var out: [UInt8] = []
        while true {
            guard position < bytes.count else { throw failure("unterminated string", at: open) }
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try escape(into: &out)
            case 0x00..<0x20:
                throw failure("control character \(Self.codePoint(byte)) in a string (it must be escaped)", at: position)
            default:
                out.append(byte)
                position += 1
            }
        }
    }

    private mutating func escape(into out: inout [UInt8]) throws(SCIMFilterError) {
        let start = position
        guard start + 1 < bytes.count else { throw failure("unterminated string", at: start) }
        let simple: UInt8? =
            switch bytes[start + 1] {
            case UInt8(ascii: "\""): UInt8(ascii: "\"")
            case UInt8(ascii: "\\"): UInt8(ascii: "\\")
            case UInt8(ascii: "/"): UInt8(ascii: "/")
            case UInt8(ascii: "b"): 0x08
            case UInt8(ascii: "f"): 0x0C
            case UInt8(ascii: "n"): 0x0A
            case UInt8(ascii: "r"): 0x0D
            case UInt8(ascii: "t"): 0x09
            default: nil
            }
        if let simple {
            out.append(simple)
            position += 2
            return
        }
        guard bytes[start + 1] == UInt8(ascii: "u") else {
            throw failure("invalid escape '\\\(describeByte(start + 1))' in a string", at: start)
        }
        var scalar = try hexQuad(at: start)
        if (0xDC00...0xDFFF).contains(scalar) { throw failure("unpaired surrogate escape in a string", at: start) }
        if (0xD800...0xDBFF).contains(scalar) {
            guard start + 7 < bytes.count, bytes[start + 6] == UInt8(ascii: "\\"), bytes[start + 7] == UInt8(ascii: "u") else {
                throw failure("unpaired surrogate escape in a string", at: start)
            }
            let low = try hexQuad(at: start + 6)
            guard (0xDC00...0xDFFF).contains(low) else { throw failure("unpaired surrogate escape in a string", at: start) }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            position = start + 12
        } else {
            position = start + 6
        }
        guard scalar != 0, let unicode = Unicode.Scalar(scalar) else { throw failure("NUL (\\u0000) in a string", at: start) }
        UTF8.encode(unicode) { out.append($0) }
    }

    /// The four hex digits of the `\u` escape at `start`.
    private func hexQuad(at start: Int) throws(SCIMFilterError) -> UInt32 {
        guard start + 6 <= bytes.count else { throw failure("invalid \\u escape in a string", at: start) }
        var value: UInt32 = 0
        for byte in bytes[(start + 2)..<(start + 6)] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid \\u escape in a string", at: start)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// A JSON number (RFC 8259 §6), kept as written: `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`, followed by a
    /// space, `)`, `]` or the end.
    private mutating func number() throws(SCIMFilterError) -> String {
        let start = position
        func digits() -> Int {
            let first = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
            return position - first
        }
        func skip(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }
        _ = skip(UInt8(ascii: "-"))
        let integerStart = position
        var valid = digits() > 0 && !(bytes[integerStart] == UInt8(ascii: "0") && position - integerStart > 1)
        if valid, skip(UInt8(ascii: ".")) { valid = digits() > 0 }
        if valid, skip(UInt8(ascii: "e")) || skip(UInt8(ascii: "E")) {
            if !skip(UInt8(ascii: "+")) { _ = skip(UInt8(ascii: "-")) }
            valid = digits() > 0
        }
        if valid, position < bytes.count, !Self.endsToken(bytes[position]) { valid = false }
        guard valid else {
            position = start
            throw failure("invalid number '\(Self.clipped(word()))'", at: start)
        }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    // MARK: - Attribute paths

    /// `[URI ":"] ATTRNAME *1subAttr` from a token `pathToken` read at `start`. A token that begins with `urn:` is a
    /// schema URN up to its last `:`, then the attribute (`urn:…:enterprise:2.0:User:manager`, `urn:…:core:2.0:User:name.familyName`).
    func attributePath(_ token: String, at start: Int) throws(SCIMFilterError) -> SCIMAttributePath {
        var schema: String?
        var names = Substring(token)
        var namesStart = start
        if token.utf8.count >= 4, SCIMName.equal(String(token.prefix(4)), "urn:") {
            let colon = token.lastIndex(of: ":")!
            let urn = token[..<colon]
            let parts = urn.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, !parts[1].isEmpty, parts[1].utf8.allSatisfy(Self.isURNIdentifier), !parts[2].isEmpty else {
                throw failure("'\(Self.clipped(String(urn)))' is not a schema URN (urn:<namespace>:<name>)", at: start)
            }
            schema = String(urn)
            names = token[token.index(after: colon)...]
            namesStart = start + urn.utf8.count + 1
            guard !names.isEmpty else { throw failure("expected an attribute name after the schema URN", at: namesStart) }
        } else if let colon = token.utf8.firstIndex(of: UInt8(ascii: ":")) {
            throw failure(
                "'\(Self.clipped(token))' is not an attribute path: a schema prefix must be a URN (urn:…)",
                at: start + token.utf8.distance(from: token.utf8.startIndex, to: colon)
            )
        }
        let parts = names.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2 else {
            throw failure("'\(Self.clipped(String(names)))' has more than one sub-attribute", at: namesStart)
        }
        try checkName(parts[0], at: namesStart)
        if parts.count == 2 { try checkName(parts[1], at: namesStart + parts[0].utf8.count + 1) }
        return SCIMAttributePath(schema: schema, attribute: String(parts[0]), subAttribute: parts.count == 2 ? String(parts[1]) : nil)
    }

    /// `ATTRNAME = ALPHA *(ALPHA / DIGIT / "-" / "_")`, or `$ref`, the one name RFC 7643 gives outside that rule
    /// (§2.3.7, reference attributes).
    func checkName(_ name: Substring, at start: Int) throws(SCIMFilterError) {
        guard let first = name.utf8.first else { throw failure("empty attribute name", at: start) }
        if SCIMName.equal(String(name), "$ref") { return }
        guard Self.isAlpha(first) else {
            throw failure("attribute name '\(Self.clipped(String(name)))' must start with a letter", at: start)
        }
        for (offset, byte) in name.utf8.enumerated() where !(Self.isAlpha(byte) || Self.isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")) {
            throw failure("unexpected \(Self.describe(byte)) in attribute name '\(Self.clipped(String(name)))'", at: start + offset)
        }
    }

    /// The longest run of characters an attribute path can hold (names, `.`, and a URN's characters).
    mutating func pathToken() -> String {
        let start = position
        while position < bytes.count, Self.isPathCharacter(bytes[position]) { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    // MARK: - PATCH paths

    /// `PATH = attrPath / valuePath [subAttr]` (RFC 7644 §3.5.2, Figure 7), the whole text, no spaces around it.
    mutating func patchPath() throws(SCIMFilterError) -> SCIMPatchPath {
        guard !bytes.isEmpty else { throw failure("empty path", at: 0) }
        let start = position
        let token = pathToken()
        guard !token.isEmpty else { throw failure("expected an attribute name, found \(describe(at: position))", at: position) }
        let attribute = try attributePath(token, at: start)
        var valueFilter: SCIMFilter?
        var subAttribute: String?
        if position < bytes.count, bytes[position] == UInt8(ascii: "[") {
            valueFilter = try self.valueFilter(of: attribute, depth: 0)
            if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
                position += 1
                let nameStart = position
                let name = pathToken()
                guard !name.contains("."), !name.contains(":") else {
                    throw failure("expected one sub-attribute name after '].', found '\(Self.clipped(name))'", at: nameStart)
                }
                try checkName(Substring(name), at: nameStart)
                subAttribute = name
            }
        }
        guard position == bytes.count else { throw unexpected(expecting: "the end") }
        return SCIMPatchPath(attribute: attribute, valueFilter: valueFilter, subAttribute: subAttribute)
    }

    // MARK: - Limits

    private func enter(_ depth: Int, at offset: Int) throws(SCIMFilterError) {
        guard depth <= maxDepth else { throw failure("filter nested deeper than \(maxDepth)", at: offset) }
    }

    private mutating func countTerm(at offset: Int) throws(SCIMFilterError) {
        terms += 1
        guard terms <= maxTerms else { throw failure("filter has more than \(maxTerms) comparisons", at: offset) }
    }

    // MARK: - Bytes

    @discardableResult
    private mutating func skipSpaces() -> Int {
        let start = position
        while position < bytes.count, bytes[position] == UInt8(ascii: " ") { position += 1 }
        return position - start
    }

    /// `word` in any ASCII case at the current position, not followed by more of a name.
    private func matchesWord(_ word: String) -> Bool {
        let end = position + word.utf8.count
        guard end <= bytes.count, zip(bytes[position..<end], word.utf8).allSatisfy({ SCIMName.lower($0) == $1 }) else { return false }
        return end == bytes.count || !Self.isPathCharacter(bytes[end])
    }

    /// The run of characters up to the next space, parenthesis, bracket, quote or control character.
    private mutating func word() -> String {
        let start = position
        while position < bytes.count, !Self.endsToken(bytes[position]), bytes[position] != UInt8(ascii: "\"") { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private func startsValue(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "-") || Self.isDigit(byte) || matchesWord("true") || matchesWord("false") || matchesWord("null")
    }

    /// The error for what stands at the current position where `expecting` should: a closing bracket without its
    /// opening one, or anything else.
    private func unexpected(expecting: String) -> SCIMFilterError {
        switch bytes[position] {
        case UInt8(ascii: ")") where !expecting.hasSuffix("')'"): failure("unbalanced ')'", at: position)
        case UInt8(ascii: "]") where !expecting.hasSuffix("']'"): failure("unbalanced ']'", at: position)
        default: failure("expected \(expecting), found \(describe(at: position))", at: position)
        }
    }

    private func failure(_ message: String, at offset: Int) -> SCIMFilterError {
        SCIMFilterError(kind: kind, message: "\(message) at \(offset)", offset: offset)
    }

    /// What stands at `offset` for a message: `the end`, a control character as `U+0009`, or up to 32 bytes of text.
    private func describe(at offset: Int) -> String {
        guard offset < bytes.count else { return "the end" }
        let byte = bytes[offset]
        if byte < 0x20 || byte == 0x7F { return Self.codePoint(byte) }
        if Self.endsToken(byte) || byte == UInt8(ascii: "\"") { return "'\(Character(Unicode.Scalar(byte)))'" }
        var end = offset
        while end < bytes.count, !Self.endsToken(bytes[end]) { end += 1 }
        return "'\(Self.clipped(String(decoding: bytes[offset..<end], as: UTF8.self)))'"
    }

    private func describeByte(_ offset: Int) -> String {
        let byte = bytes[offset]
        return byte < 0x20 || byte >= 0x7F ? Self.codePoint(byte) : String(Character(Unicode.Scalar(byte)))
    }

    private static func describe(_ byte: UInt8) -> String {
        byte < 0x20 || byte >= 0x7F ? codePoint(byte) : "'\(Character(Unicode.Scalar(byte)))'"
    }

    private static func codePoint(_ byte: UInt8) -> String {
        let hex = String(byte, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: 4 - hex.count) + hex
    }

    /// At most 32 characters of `text` for a message.
    private static func clipped(_ text: String) -> String {
        text.count <= 32 ? text : String(text.prefix(32)) + "…"
    }

    /// A space, a parenthesis, a bracket or a control character: where a name, operator or number ends.
    private static func endsToken(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "["), UInt8(ascii: "]"), 0x00..<0x20, 0x7F: true
        default: false
        }
    }

    /// Letters, digits, `-`, `_`, `.`, `:`, `$`, and the other characters of a URN's name (RFC 8141 §2: unreserved,
    /// `%`, sub-delims but for parentheses, `@` and `/`).
    private static func isPathCharacter(_ byte: UInt8) -> Bool {
        if isAlpha(byte) || isDigit(byte) { return true }
        switch byte {
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "~"), UInt8(ascii: "%"),
            UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: "@"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    /// A URN namespace identifier's characters (RFC 8141 §2: letters, digits, `-`).
    private static func isURNIdentifier(_ byte: UInt8) -> Bool {
        isAlpha(byte) || isDigit(byte) || byte == UInt8(ascii: "-")
    }

    private static func isAlpha(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
