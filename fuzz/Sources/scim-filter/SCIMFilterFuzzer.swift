// Fuzzes the SCIM filter and PATCH path parsers: no trap; an accepted filter keeps the grammar's rules and the limits
// it was read under, its canonical text parses back to it, and it evaluates against a sample user without trapping;
// an accepted path likewise; every refusal is of the right kind with an offset inside the text.
import FuzzSupport
import KeywardHTTPInput
import KeywardJOSE

/// Limits far below the defaults, so that inputs the fuzzer can grow reach them.
private let tight = SCIMFilterLimits(maxLength: 256, maxDepth: 3, maxTerms: 4)

/// A user with the attribute kinds a filter compares: strings, a number, a boolean, empty values, a multi-valued
/// complex attribute, a complex one and the enterprise extension.
private let user: JSONObject = [
    "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
    "id": "2819c223-7f76-453a-919d-413861904646",
    "userName": "bjensen@example.com",
    "name": ["familyName": "Jensen", "givenName": "Barbara"],
    "title": "Tour Guide",
    "nickName": "",
    "active": true,
    "loginCount": 42,
    "emails": [["value": "bjensen@example.com", "type": "work", "primary": true], ["value": "babs@jensen.org", "type": "home"]],
    "ims": [],
    "phoneNumbers": nil,
    "meta": ["lastModified": "2011-05-13T04:42:34Z"],
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": ["employeeNumber": "701984", "manager": ["value": "26118915"]],
]

/// The input is read as a filter and as a PATCH path, each under the default limits and under `tight`.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = FuzzInput(data, size).text
    var filters: [SCIMFilter?] = []
    var paths: [SCIMPatchPath?] = []
    for limits in [SCIMFilterLimits.default, tight] {
        do {
            let filter = try SCIMFilter.parse(text, limits: limits)
            check(filter, limits, text: text)
            filters.append(filter)
        } catch {
            check(error, .invalidFilter, text: text)
            filters.append(nil)
        }
        do {
            let path = try SCIMPatchPath.parse(text, limits: limits)
            check(path, limits, text: text)
            paths.append(path)
        } catch {
            check(error, .invalidPath, text: text)
            paths.append(nil)
        }
    }
    // What the tight limits accept, the default ones accept too, as the same value.
    if let strict = filters[1] { expect(filters[0] == strict, "a filter accepted under tight limits only: \(text.debugDescription)") }
    if let strict = paths[1] { expect(paths[0] == strict, "a path accepted under tight limits only: \(text.debugDescription)") }
    return 0
}

private func check(_ filter: SCIMFilter, _ limits: SCIMFilterLimits, text: String) {
    let shape = Shape(filter)
    expect(shape.terms >= 1 && shape.terms <= limits.maxTerms, "\(shape.terms) terms accepted under a limit of \(limits.maxTerms): \(text.debugDescription)")
    expect(shape.depth <= limits.maxDepth, "nesting \(shape.depth) accepted under a limit of \(limits.maxDepth): \(text.debugDescription)")
    expect(shape.valid, "a filter breaking the grammar's rules accepted: \(text.debugDescription) as \(filter)")
    roundTrip(filter, limits)
    // Evaluation never traps, whatever the filter names; names are case-insensitive, so the same filter with every
    // name in upper case is equal and matches alike.
    let shouted = uppercased(filter)
    expect(shouted == filter, "\(shouted) differs from \(filter)")
    for caseExact in [false, true] {
        let matches = filter.matches(user, caseExact: { _ in caseExact })
        expect(shouted.matches(user, caseExact: { _ in caseExact }) == matches, "\(shouted) and \(filter) match differently")
        _ = filter.matchingIndices(in: user["emails"]?.arrayValue ?? [], of: SCIMAttributePath(attribute: "emails"), caseExact: { _ in caseExact })
    }
}

private func uppercased(_ filter: SCIMFilter) -> SCIMFilter {
    func path(_ path: SCIMAttributePath) -> SCIMAttributePath {
        SCIMAttributePath(schema: path.schema?.uppercased(), attribute: path.attribute.uppercased(), subAttribute: path.subAttribute?.uppercased())
    }
    switch filter {
    case .compare(let attribute, let op, let value): return .compare(path(attribute), op, value)
    case .present(let attribute): return .present(path(attribute))
    case .not(let inner): return .not(uppercased(inner))
    case .and(let left, let right): return .and(uppercased(left), uppercased(right))
    case .or(let left, let right): return .or(uppercased(left), uppercased(right))
    case .valuePath(let attribute, let inner): return .valuePath(path(attribute), uppercased(inner))
    }
}

/// The canonical text parses back to an equal filter and is itself canonical. Its length may differ from the input's
/// (`not(` becomes `not (`), so only the structural limits are kept for the second parse.
private func roundTrip(_ filter: SCIMFilter, _ limits: SCIMFilterLimits) {
    let text = filter.description
    let again: SCIMFilter
    do {
        again = try SCIMFilter.parse(text, limits: SCIMFilterLimits(maxLength: .max, maxDepth: limits.maxDepth, maxTerms: limits.maxTerms))
    } catch {
        expectationFailed("the canonical text \(text.debugDescription) is refused: \(error)")
    }
    expect(again == filter, "the canonical text \(text.debugDescription) parses to another filter")
    expect(again.description == text, "the canonical text \(text.debugDescription) is not stable")
}

private func check(_ path: SCIMPatchPath, _ limits: SCIMFilterLimits, text: String) {
    expect(Shape.valid(path.attribute), "an invalid attribute path accepted: \(text.debugDescription)")
    if let filter = path.valueFilter {
        expect(path.attribute.subAttribute == nil, "a value filter after a sub-attribute accepted: \(text.debugDescription)")
        let shape = Shape(filter, inValuePath: true)
        expect(shape.valid && shape.depth + 1 <= limits.maxDepth && shape.terms <= limits.maxTerms, "a value filter breaking the rules or limits accepted: \(text.debugDescription)")
        _ = filter.matchingIndices(in: user["emails"]?.arrayValue ?? [], of: path.attribute)
    } else {
        expect(path.subAttribute == nil, "a sub-attribute after no value filter: \(text.debugDescription)")
    }
    if let subAttribute = path.subAttribute {
        expect(Shape.valid(name: subAttribute), "an invalid sub-attribute accepted: \(text.debugDescription)")
    }
    let canonical = path.description
    do {
        let again = try SCIMPatchPath.parse(canonical, limits: SCIMFilterLimits(maxLength: .max, maxDepth: limits.maxDepth, maxTerms: limits.maxTerms))
        expect(again == path && again.description == canonical, "the canonical path \(canonical.debugDescription) does not give the path back")
    } catch {
        expectationFailed("the canonical path \(canonical.debugDescription) is refused: \(error)")
    }
}

/// A refusal is of the parse's kind, names a byte offset inside the text (or its end), and says it.
private func check(_ error: SCIMFilterError, _ kind: SCIMFilterError.Kind, text: String) {
    expect(error.kind == kind, "a \(kind) parse refused with \(error.kind): \(text.debugDescription)")
    expect(error.offset >= 0 && error.offset <= text.utf8.count, "offset \(error.offset) outside the text: \(text.debugDescription)")
    expect(error.message.hasSuffix(" at \(error.offset)"), "a message without its offset: \(error.message)")
}

/// What a filter holds: its comparisons, how deeply `not` and value filters nest, and whether it keeps the rules
/// RFC 7644 §3.4.2.2 sets beyond the grammar (no nested value filter, no ordering of booleans or null, substrings of
/// strings only, names as RFC 7643 §2.1 spells them).
private struct Shape {
    var terms = 0
    var depth = 0
    var valid = true

    init(_ filter: SCIMFilter, inValuePath: Bool = false) {
        visit(filter, depth: 0, inValuePath: inValuePath)
    }

    private mutating func visit(_ filter: SCIMFilter, depth: Int, inValuePath: Bool) {
        self.depth = max(self.depth, depth)
        switch filter {
        case .compare(let path, let op, let value):
            terms += 1
            valid = valid && Self.valid(path)
            switch value {
            case .string: break
            case .number: valid = valid && !op.isSubstring
            case .boolean, .null: valid = valid && !op.isSubstring && !op.isOrdering
            }
        case .present(let path):
            terms += 1
            valid = valid && Self.valid(path)
        case .not(let inner):
            visit(inner, depth: depth + 1, inValuePath: inValuePath)
        case .and(let left, let right), .or(let left, let right):
            visit(left, depth: depth, inValuePath: inValuePath)
            visit(right, depth: depth, inValuePath: inValuePath)
        case .valuePath(let path, let inner):
            valid = valid && !inValuePath && Self.valid(path) && path.subAttribute == nil
            visit(inner, depth: depth + 1, inValuePath: true)
        }
    }

    static func valid(_ path: SCIMAttributePath) -> Bool {
        valid(name: path.attribute) && (path.subAttribute.map { valid(name: $0) } ?? true)
            && (path.schema.map { $0.lowercased().hasPrefix("urn:") && $0.split(separator: ":", omittingEmptySubsequences: false).count >= 3 } ?? true)
    }

    /// `ALPHA *(ALPHA / DIGIT / "-" / "_")`, or `$ref`.
    static func valid(name: String) -> Bool {
        if name.lowercased() == "$ref" { return true }
        let letter: (Unicode.Scalar) -> Bool = { ("a"..."z").contains($0) || ("A"..."Z").contains($0) }
        guard let first = name.unicodeScalars.first, letter(first) else { return false }
        return name.unicodeScalars.allSatisfy { letter($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
    }
}
