// A SCIM PATCH (RFC 7644 §3.5.2) applied to a resource's JSON, in the shapes Entra ID and Okta send.
import KeywardHTTPInput
import KeywardJOSE

/// Applies a PatchOp body's operations, in order, to the resource as it is rendered; the result is then read as a
/// `PUT` body would be, so a PATCH is held to every rule a `PUT` is. What directories send, besides RFC 7644:
/// - Entra ID: `op` capitalised (`Replace`), booleans as strings (`"False"`), `emails[type eq "work"].value` replaced
///   when the user has no work address (taken as an add: a value with `type` `work` is created), the manager's id as
///   a bare string, and no-path values naming attributes by path (`{"name.givenName": "…"}`).
/// - Okta: no-path `replace` with a value object (`{"active": false}`), each member applied as its own path.
enum SCIMPatch {
    static let schema = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
    static let maxOperations = 100

    enum Operation: String { case add, remove, replace }

    /// One operation of a PatchOp body, read: its `op`, its `path` parsed, its `value`.
    struct Step {
        let index: Int
        let op: Operation
        let path: SCIMPatchPath?
        let value: JSONValue?
    }

    /// A PatchOp body's operations (RFC 7644 §3.5.2): `schemas` naming the PatchOp URN, 1 to `maxOperations`
    /// operations, each with an `op` (in any case) and a `path` that parses.
    static func steps(_ body: JSONObject) throws(SCIMError) -> [Step] {
        let members = try Members(body, at: nil)
        try members.refuseUnknown(["schemas", "Operations"])
        try members.schemas(listing: schema)
        guard case .array(let operations)? = members["Operations"], !operations.isEmpty else {
            throw SCIMError(.badRequest, .invalidSyntax, "'Operations' must hold at least one operation")
        }
        guard operations.count <= maxOperations else {
            throw SCIMError(.badRequest, .invalidValue, "a PATCH takes at most \(maxOperations) operations")
        }
        return try operations.enumerated().map { index, value throws(SCIMError) in
            guard case .object(let object) = value else { throw SCIMError(.badRequest, .invalidSyntax, "operation \(index) is not an object") }
            let operation = try Members(object, at: "Operations[\(index)]")
            try operation.refuseUnknown(["op", "path", "value"])
            guard let name = try operation.text("op"), let op = Operation(rawValue: SCIMName.folded(name)) else {
                throw SCIMError(.badRequest, .invalidSyntax, "operation \(index): 'op' is add, remove or replace")
            }
            var path: SCIMPatchPath?
            if let pathText = try operation.text("path") {
                do throws(SCIMFilterError) {
                    path = try SCIMPatchPath.parse(pathText)
                } catch {
                    throw SCIMError(.badRequest, .invalidPath, "operation \(index): \(error.message) (at byte \(error.offset) of the path)")
                }
            }
            return Step(index: index, op: op, path: path, value: operation["value"])
        }
    }

    static func apply(_ body: JSONObject, to resource: JSONObject) throws(SCIMError) -> JSONObject {
        var resource = resource
        for step in try steps(body) {
            let (index, op, value) = (step.index, step.op, step.value)
            if let path = step.path {
                try apply(op, path, value, to: &resource)
            } else {
                guard op != .remove else { throw SCIMError(.badRequest, .noTarget, "operation \(index): remove needs a 'path'") }
                guard case .object(let values)? = value else {
                    throw SCIMError(.badRequest, .invalidValue, "operation \(index): without a 'path', 'value' is an object of attributes")
                }
                for (key, member) in values.sorted(by: { $0.key < $1.key }) {
                    if SCIMName.equal(key, SCIMUserSchema.enterprise), case .object(let extensionMembers) = member {
                        for (subKey, subValue) in extensionMembers.sorted(by: { $0.key < $1.key }) {
                            try apply(op, SCIMPatchPath(attribute: .init(schema: SCIMUserSchema.enterprise, attribute: subKey)), subValue, to: &resource)
                        }
                        continue
                    }
                    let path: SCIMPatchPath
                    do {
                        path = try SCIMPatchPath.parse(key)
                    } catch {
                        throw SCIMError(.badRequest, .invalidPath, "operation \(index): '\(key)' names no attribute: \(error.message)")
                    }
                    try apply(op, path, member, to: &resource)
                }
            }
        }
        return resource
    }

    private static let readOnly = ["id", "meta", "schemas", "groups"]

    private static func apply(_ op: Operation, _ path: SCIMPatchPath, _ rawValue: JSONValue?, to resource: inout JSONObject) throws(SCIMError) {
        if let schema = path.attribute.schema, SCIMName.equal(schema + ":" + path.attribute.attribute, SCIMUserSchema.enterprise) {
            return try applyToExtension(op, path, rawValue, to: &resource)
        }
        let sub = path.valueFilter == nil ? path.attribute.subAttribute : path.subAttribute
        let attribute = path.attribute.attribute
        let inExtension = path.attribute.schema.map { SCIMName.equal($0, SCIMUserSchema.enterprise) } ?? false
        if let schema = path.attribute.schema, !inExtension, !SCIMName.equal(schema, SCIMUserSchema.core) {
            throw SCIMError(.badRequest, .invalidPath, "'\(path)' names an unknown schema")
        }
        if !inExtension, readOnly.contains(where: { SCIMName.equal($0, attribute) }) {
            throw SCIMError(.badRequest, .mutability, "'\(attribute)' is read-only")
        }
        if op == .remove, !inExtension, SCIMName.equal(attribute, "active") {
            throw SCIMError(.badRequest, .invalidValue, "'active' cannot be removed: a user is enabled or disabled; replace it with true or false")
        }
        guard op == .remove || rawValue != nil else { throw SCIMError(.badRequest, .invalidValue, "\(op.rawValue) '\(path)' needs a 'value'") }
        let value = rawValue.map { normalized($0, attribute: sub ?? attribute) }

        if inExtension {
            var container = object(resource, SCIMUserSchema.enterprise) ?? [:]
            try change(&container, attribute: attribute, sub: sub, filter: path.valueFilter, op, value, path: path)
            resource[key(in: resource, SCIMUserSchema.enterprise)] = .object(container)
            if !hasSchema(resource, SCIMUserSchema.enterprise), case .array(let schemas)? = resource["schemas"] {
                resource["schemas"] = .array(schemas + [.string(SCIMUserSchema.enterprise)])
            }
        } else {
            try change(&resource, attribute: attribute, sub: sub, filter: path.valueFilter, op, value, path: path)
        }
    }

    /// A path naming the enterprise extension itself: its members are added or replaced one by one, or all removed.
    private static func applyToExtension(_ op: Operation, _ path: SCIMPatchPath, _ value: JSONValue?, to resource: inout JSONObject) throws(SCIMError) {
        guard path.valueFilter == nil, path.attribute.subAttribute == nil else { throw SCIMError(.badRequest, .invalidPath, "'\(path)' names no attribute") }
        guard op != .remove else {
            resource.removeValue(forKey: key(in: resource, SCIMUserSchema.enterprise))
            return
        }
        guard case .object(let members)? = value else {
            throw SCIMError(.badRequest, .invalidValue, "\(op.rawValue) '\(path)' takes an object of the extension's attributes")
        }
        for (name, member) in members.sorted(by: { $0.key < $1.key }) where !SCIMName.equal(name, "schemas") {
            try apply(op, SCIMPatchPath(attribute: .init(schema: SCIMUserSchema.enterprise, attribute: name)), member, to: &resource)
        }
    }

    private static func change(
        _ container: inout JSONObject, attribute: String, sub: String?, filter: SCIMFilter?, _ op: Operation, _ value: JSONValue?, path: SCIMPatchPath
    ) throws(SCIMError) {
        let name = key(in: container, attribute)
        let current = container[name]
        if case .array(let existing)? = current, filter != nil || sub != nil {
            return try changeValues(existing, in: &container, name: name, sub: sub, filter: filter, op, value, path: path)
        }
        if filter != nil {
            guard current == nil || current == .null else {
                throw SCIMError(.badRequest, .invalidPath, "'\(attribute)' is not multi-valued; '\(path)' filters its values")
            }
            return try changeValues([], in: &container, name: name, sub: sub, filter: filter, op, value, path: path)
        }
        switch op {
        case .remove:
            if let sub {
                guard case .object(var object)? = current else { return }
                object.removeValue(forKey: key(in: object, sub))
                container[name] = object.isEmpty ? nil : .object(object)
            } else {
                container.removeValue(forKey: name)
            }
        case .add, .replace:
            if let sub {
                var object: JSONObject
                switch current {
                case nil, .null?: object = [:]
                case .object(let existing)?: object = existing
                default: throw SCIMError(.badRequest, .invalidPath, "'\(attribute)' has no sub-attributes; '\(path)' names one")
                }
                object[key(in: object, sub)] = value!
                container[name] = .object(object)
            } else if case .array(let existing)? = current, op == .add {
                // Adding to a multi-valued attribute adds the values (RFC 7644 §3.5.2.1); a new primary demotes the old.
                let added: [JSONValue] = if case .array(let values) = value! { values } else { [value!] }
                var values = existing + added
                demotePrimaries(&values, keeping: Set(existing.count..<values.count))
                container[name] = try capped(values, attribute)
            } else if case .object(let existing)? = current, case .object(let given) = value! {
                // A complex attribute keeps the sub-attributes the value does not name (RFC 7644 §3.5.2.1, §3.5.2.3).
                var merged = existing
                for (subName, subValue) in given { merged[key(in: merged, subName)] = subValue }
                container[name] = .object(merged)
            } else if case .array(let values) = value! {
                container[name] = try capped(values, attribute)
            } else {
                container[name] = value!
            }
        }
    }

    /// An operation on the values of a multi-valued attribute: those `filter` selects (every value without one), or
    /// their sub-attribute `sub`. Removing a value's `value` removes the value (it means nothing without it).
    private static func changeValues(
        _ existing: [JSONValue], in container: inout JSONObject, name: String, sub: String?, filter: SCIMFilter?, _ op: Operation,
        _ value: JSONValue?, path: SCIMPatchPath
    ) throws(SCIMError) {
        var values = existing
        let selected = filter.map { Set($0.matchingIndices(in: values, of: SCIMAttributePath(attribute: name))) } ?? Set(values.indices)
        var touched: Set<Int> = []
        if selected.isEmpty {
            guard op != .remove else { return }
            // Nothing matched: a value is made from the filter's equalities (Entra ID replaces emails[type eq "work"].value
            // on users without one).
            guard let filter, var made = equalities(filter) else {
                throw SCIMError(.badRequest, .noTarget, "no value of '\(name)' matches '\(path)'")
            }
            try set(&made, sub: sub, value!, path: path)
            values.append(.object(made))
            touched.insert(values.count - 1)
        } else if op == .remove {
            values = values.indices.compactMap { index in
                guard selected.contains(index) else { return values[index] }
                guard let sub, !SCIMName.equal(sub, "value"), case .object(var element) = values[index] else { return nil }
                element.removeValue(forKey: key(in: element, sub))
                return .object(element)
            }
        } else {
            for index in selected.sorted() {
                guard case .object(var element) = values[index] else { continue }
                try set(&element, sub: sub, value!, path: path)
                values[index] = .object(element)
                touched.insert(index)
            }
        }
        demotePrimaries(&values, keeping: touched)
        container[name] = values.isEmpty ? nil : try capped(values, name)
    }

    /// RFC 7644 §3.5.2: a value made primary by an operation makes every other value of the attribute not primary.
    private static func demotePrimaries(_ values: inout [JSONValue], keeping touched: Set<Int>) {
        let madePrimary = touched.filter { index in
            guard case .object(let element) = values[index], let flag = element[key(in: element, "primary")] else { return false }
            return flag == .bool(true) || flag == .string("true") || flag == .string("True")
        }
        guard madePrimary.count == 1 else { return }
        for index in values.indices where !madePrimary.contains(index) {
            guard case .object(var element) = values[index], let primaryKey = element.keys.first(where: { SCIMName.equal($0, "primary") }) else { continue }
            element[primaryKey] = .bool(false)
            values[index] = .object(element)
        }
    }

    /// Multi-valued attributes are bounded after every operation, not only when the result is read.
    private static func capped(_ values: [JSONValue], _ attribute: String) throws(SCIMError) -> JSONValue {
        guard values.count <= SCIMUserResource.maxValues else {
            throw SCIMError(.badRequest, .invalidValue, "'\(attribute)' would hold more than \(SCIMUserResource.maxValues) values")
        }
        return .array(values)
    }

    /// Sets `sub` of a value to `value`, or, without `sub`, merges the value's members into it.
    private static func set(_ element: inout JSONObject, sub: String?, _ value: JSONValue, path: SCIMPatchPath) throws(SCIMError) {
        if let sub {
            element[key(in: element, sub)] = value
            return
        }
        guard case .object(let members) = value else {
            throw SCIMError(.badRequest, .invalidValue, "'\(path)' selects values of a complex attribute: 'value' is an object")
        }
        for (subName, subValue) in members { element[key(in: element, subName)] = subValue }
    }

    /// The members a filter made only of `eq` comparisons joined by `and` says a matching value has; nil otherwise.
    private static func equalities(_ filter: SCIMFilter) -> JSONObject? {
        switch filter {
        case .compare(let path, .eq, let operand) where path.schema == nil && path.subAttribute == nil:
            let value: JSONValue = switch operand {
            case .string(let text): .string(text)
            case .boolean(let flag): .bool(flag)
            case .number(let text): .number(Double(text) ?? 0)
            case .null: .null
            }
            return [path.attribute: value]
        case .and(let left, let right):
            guard let left = equalities(left), let right = equalities(right) else { return nil }
            return left.merging(right) { first, _ in first }
        default:
            return nil
        }
    }

    /// Entra ID sends `"True"` / `"False"` for booleans in PATCH values.
    private static func normalized(_ value: JSONValue, attribute: String) -> JSONValue {
        let booleans = ["active", "primary"]
        if booleans.contains(where: { SCIMName.equal($0, attribute) }), case .string(let text) = value {
            switch SCIMName.folded(text) {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: return value
            }
        }
        if case .object(var members) = value {
            for (name, member) in members where booleans.contains(where: { SCIMName.equal($0, name) }) {
                members[name] = normalized(member, attribute: name)
            }
            return .object(members)
        }
        if case .array(let values) = value, SCIMName.equal(attribute, "emails") || SCIMName.equal(attribute, "phoneNumbers") || SCIMName.equal(attribute, "addresses") {
            return .array(values.map { normalized($0, attribute: "") })
        }
        return value
    }

    /// The member name `name` is stored under in `object` (names are case-insensitive), or `name` when there is none.
    private static func key(in object: JSONObject, _ name: String) -> String {
        object.keys.first { SCIMName.equal($0, name) } ?? name
    }

    private static func object(_ resource: JSONObject, _ name: String) -> JSONObject? {
        if case .object(let object)? = resource[key(in: resource, name)] { return object }
        return nil
    }

    private static func hasSchema(_ resource: JSONObject, _ urn: String) -> Bool {
        guard case .array(let schemas)? = resource["schemas"] else { return false }
        return schemas.contains { $0.stringValue.map { SCIMName.equal($0, urn) } ?? false }
    }
}
