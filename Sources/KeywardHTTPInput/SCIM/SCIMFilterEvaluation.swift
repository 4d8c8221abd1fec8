// Whether a SCIM resource (its JSON) matches a filter, with the semantics of RFC 7644 §3.4.2.2, and which values of a
// multi-valued attribute a PATCH value filter selects.
import KeywardJOSE

extension SCIMFilter {
    /// Whether `resource` matches, by RFC 7644 §3.4.2.2:
    ///
    /// - Attribute names are looked up without regard to case (RFC 7643 §2.1). A path with a schema URN of the core
    ///   schemas (`urn:ietf:params:scim:schemas:core:2.0:User`, `…:Group`) names a top-level attribute; with any other
    ///   URN, an attribute inside the resource's member of that name (an extension, RFC 7643 §3.3).
    /// - A multi-valued attribute matches when any of its values does (`emails.value eq "x"` looks at each email's
    ///   `value`). A complex value compared without a sub-attribute is compared by its `value` sub-attribute (RFC 7643
    ///   §2.4: the attribute's significant value), so `emails co "example.com"` reads each email's address.
    /// - Strings compare without regard to case unless `caseExact` says the attribute is case-exact (RFC 7643 §2.3.1);
    ///   `caseExact` is given the path as written, and inside a value filter the path qualified by its attribute
    ///   (`emails.value` for `emails[value eq "x"]`).
    /// - `co`, `sw` and `ew` apply to strings only; `gt`, `ge`, `lt` and `le` order strings lexicographically (so
    ///   ISO 8601 timestamps of one form in time order) and numbers by value. A value of another JSON type than the
    ///   operand's never matches.
    /// - `pr` (Table 3): a value that is not null, not an empty string, not an empty array, and for a complex value one
    ///   with some member that is present in turn.
    /// - An unassigned attribute (missing, null or an empty array) is the same state as null (RFC 7643 §2.5): it
    ///   matches `eq null`, and `ne` any other value, since null is not identical to it (Table 3: "The attribute and
    ///   operator values are not identical"). On an assigned attribute `ne` follows the rule for multi-valued ones
    ///   above: it matches when some value is not identical, so `emails.type ne "work"` matches a user with a work
    ///   and a home address. `not (emails.type eq "work")` is the filter that excludes that user.
    public func matches(_ resource: JSONObject, caseExact: (SCIMAttributePath) -> Bool = { _ in false }) -> Bool {
        SCIMEvaluation.matches(self, resource, within: nil, caseExact: caseExact)
    }

    /// The indices of the values in `values` (a multi-valued attribute) that this filter, a PATCH path's `[...]`,
    /// selects: each value is the resource the filter's paths are read from (a value that is not an object stands for
    /// `{"value": …}`). `attribute` names the multi-valued attribute, so that `caseExact` is given qualified paths
    /// (`emails.value`).
    public func matchingIndices(
        in values: [JSONValue], of attribute: SCIMAttributePath? = nil, caseExact: (SCIMAttributePath) -> Bool = { _ in false }
    ) -> [Int] {
        values.indices.filter { SCIMEvaluation.matches(self, SCIMEvaluation.element(values[$0]), within: attribute, caseExact: caseExact) }
    }
}

/// The evaluation, recursive over the filter (whose depth the parser bounds).
enum SCIMEvaluation {
    static func matches(
        _ filter: SCIMFilter, _ object: JSONObject, within parent: SCIMAttributePath?, caseExact: (SCIMAttributePath) -> Bool
    ) -> Bool {
        switch filter {
        case .compare(let path, let op, let operand):
            let exact = caseExact(qualified(path, within: parent))
            return compare(values(of: path, in: object), op, operand, exact: exact)
        case .present(let path):
            return values(of: path, in: object).contains(where: isPresent)
        case .not(let inner):
            return !matches(inner, object, within: parent, caseExact: caseExact)
        case .and(let left, let right):
            return matches(left, object, within: parent, caseExact: caseExact) && matches(right, object, within: parent, caseExact: caseExact)
        case .or(let left, let right):
            return matches(left, object, within: parent, caseExact: caseExact) || matches(right, object, within: parent, caseExact: caseExact)
        case .valuePath(let path, let inner):
            let attribute = qualified(path, within: parent)
            return values(of: path, in: object).contains { matches(inner, element($0), within: attribute, caseExact: caseExact) }
        }
    }

    /// A value of a multi-valued attribute as the object a value filter reads: itself, or `{"value": …}`.
    static func element(_ value: JSONValue) -> JSONObject {
        value.objectValue ?? ["value": value]
    }

    /// `value` inside `emails[value eq "x"]` is `emails.value` to `caseExact`.
    private static func qualified(_ path: SCIMAttributePath, within parent: SCIMAttributePath?) -> SCIMAttributePath {
        guard let parent, path.schema == nil, path.subAttribute == nil else { return path }
        return SCIMAttributePath(schema: parent.schema, attribute: parent.attribute, subAttribute: path.attribute)
    }

    /// The non-null values `path` names in `object`: a multi-valued attribute gives each of its values, a sub-attribute
    /// of one gives that sub-attribute of each value.
    static func values(of path: SCIMAttributePath, in object: JSONObject) -> [JSONValue] {
        var container = object
        if let schema = path.schema, !isCoreSchema(schema) {
            guard let extensionObject = member(schema, of: object)?.objectValue else { return [] }
            container = extensionObject
        }
        guard let attribute = member(path.attribute, of: container) else { return [] }
        var found: [JSONValue] = []
        func add(_ value: JSONValue) {
            switch value {
            case .null: break
            case .array(let values): found += values.filter { !$0.isNull }
            default: found.append(value)
            }
        }
        guard let subAttribute = path.subAttribute else {
            add(attribute)
            return found
        }
        for value in attribute.arrayValue ?? [attribute] {
            if let object = value.objectValue, let inner = member(subAttribute, of: object) { add(inner) }
        }
        return found
    }

    /// RFC 7643 §8.7.1's core schemas (User, Group, and the others under `urn:ietf:params:scim:schemas:core:2.0:`),
    /// whose attributes sit at the top of a resource.
    private static func isCoreSchema(_ schema: String) -> Bool {
        let core = "urn:ietf:params:scim:schemas:core:2.0:"
        return schema.utf8.count > core.utf8.count && SCIMName.equal(String(schema.prefix(core.count)), core)
    }

    /// The member called `name` in any case: the exact spelling first, otherwise the first in order of the names that
    /// differ from it in case only (so the answer does not depend on a dictionary's order).
    static func member(_ name: String, of object: JSONObject) -> JSONValue? {
        if let value = object[name] { return value }
        var found: (name: String, value: JSONValue)?
        for (key, value) in object where SCIMName.equal(key, name) && (found == nil || key < found!.name) {
            found = (key, value)
        }
        return found?.value
    }

    /// Whether any of `values` (those of one attribute) matches `op operand`; `ne` and `eq null` as `matches` says.
    private static func compare(_ values: [JSONValue], _ op: SCIMCompareOperator, _ operand: SCIMFilterValue, exact: Bool) -> Bool {
        if case .null = operand {
            switch op {
            case .eq: return values.isEmpty
            case .ne: return !values.isEmpty
            default: return false
            }
        }
        if op == .ne {
            return values.isEmpty || values.contains { !test($0, .eq, operand, exact: exact) }
        }
        return values.contains { test($0, op, operand, exact: exact) }
    }

    private static func test(_ value: JSONValue, _ op: SCIMCompareOperator, _ operand: SCIMFilterValue, exact: Bool) -> Bool {
        var value = value
        if let object = value.objectValue {
            guard let significant = member("value", of: object) else { return false }
            value = significant
        }
        switch (value, operand) {
        case (.string(let attribute), .string(let text)):
            let (left, right) = exact ? (attribute, text) : (attribute.lowercased(), text.lowercased())
            switch op {
            case .eq: return left == right
            case .ne: return left != right
            case .co: return right.isEmpty || left.contains(right)
            case .sw: return left.hasPrefix(right)
            case .ew: return left.hasSuffix(right)
            case .gt: return left > right
            case .ge: return left >= right
            case .lt: return left < right
            case .le: return left <= right
            }
        case (.number(let attribute), .number(let text)):
            guard let number = Double(text) else { return false }
            switch op {
            case .eq: return attribute == number
            case .ne: return attribute != number
            case .gt: return attribute > number
            case .ge: return attribute >= number
            case .lt: return attribute < number
            case .le: return attribute <= number
            case .co, .sw, .ew: return false
            }
        case (.bool(let attribute), .boolean(let flag)):
            switch op {
            case .eq: return attribute == flag
            case .ne: return attribute != flag
            default: return false
            }
        default:
            return false
        }
    }

    /// `pr`: not null, not an empty string or array, and for an array or object some element or member present in
    /// turn. A worklist rather than recursion: a resource may nest as deeply as its JSON allows.
    private static func isPresent(_ value: JSONValue) -> Bool {
        var pending = [value]
        while let value = pending.popLast() {
            switch value {
            case .null: continue
            case .string(let text): if !text.isEmpty { return true }
            case .number, .bool: return true
            case .array(let values): pending += values
            case .object(let members): pending += members.values
            }
        }
        return false
    }
}
