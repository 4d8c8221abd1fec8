// `attributes` and `excludedAttributes` (RFC 7644 §3.4.2.5, §3.9): which attributes of a resource an answer carries.
import Foundation
import KeywardHTTPInput
import KeywardJOSE

/// The attributes a caller asked for, or asked to leave out. `id` and `schemas` are always returned (RFC 7643 §7:
/// `returned: always`). Paths name attributes (`emails`), sub-attributes (`name.givenName`, `emails.value`) and
/// extension attributes by their URN (`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department`, or the
/// URN alone for the whole extension).
struct SCIMProjection: Sendable {
    private var included: [SCIMAttributePath] = []
    private var excluded: [SCIMAttributePath] = []

    static let none = SCIMProjection()
    static let maxPaths = 50

    init() {}

    init(attributes: [String], excludedAttributes: [String]) throws(SCIMError) {
        included = try Self.paths(attributes, "attributes")
        excluded = try Self.paths(excludedAttributes, "excludedAttributes")
    }

    /// The query's comma-separated lists.
    init(query attributes: String?, excluded: String?) throws(SCIMError) {
        func split(_ text: String?) -> [String] {
            (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        try self.init(attributes: split(attributes), excludedAttributes: split(excluded))
    }

    private static func paths(_ texts: [String], _ parameter: String) throws(SCIMError) -> [SCIMAttributePath] {
        guard texts.count <= maxPaths else { throw SCIMError(.badRequest, .invalidValue, "'\(parameter)' names more than \(maxPaths) attributes") }
        return try texts.map { text throws(SCIMError) in
            let path: SCIMPatchPath
            do throws(SCIMFilterError) {
                path = try SCIMPatchPath.parse(text)
            } catch {
                throw SCIMError(.badRequest, .invalidValue, "'\(parameter)': '\(text)' is not an attribute path (\(error.message))")
            }
            guard path.valueFilter == nil else { throw SCIMError(.badRequest, .invalidValue, "'\(parameter)': '\(text)' has a value filter") }
            return Self.resolved(path.attribute)
        }
    }

    /// The enterprise extension's URN alone parses as schema `…:2.0` and attribute `User`: read it as the extension.
    private static func resolved(_ path: SCIMAttributePath) -> SCIMAttributePath {
        if let schema = path.schema, SCIMName.equal(schema + ":" + path.attribute, SCIMUserSchema.enterprise) {
            return SCIMAttributePath(attribute: SCIMUserSchema.enterprise)
        }
        return path
    }

    /// Whether an answer carries the top-level attribute `name` (a group's members are read only when it does).
    func returns(_ name: String) -> Bool {
        if !included.isEmpty, !included.contains(where: { $0.schema == nil && SCIMName.equal($0.attribute, name) }) { return false }
        return !excluded.contains { $0.schema == nil && $0.subAttribute == nil && SCIMName.equal($0.attribute, name) }
    }

    func apply(_ resource: JSONObject) -> JSONObject {
        var result = resource
        if !included.isEmpty {
            result = resource.filter { key, _ in ["id", "schemas"].contains(key) }
            for path in included { Self.copy(path, from: resource, into: &result) }
        }
        for path in excluded { Self.remove(path, from: &result) }
        return result
    }

    /// The member of `resource` the path starts in, and the attribute inside it: (container key or nil, attribute).
    private static func location(_ path: SCIMAttributePath) -> (container: String?, attribute: String, sub: String?) {
        if let schema = path.schema, SCIMName.equal(schema, SCIMUserSchema.enterprise) { return (SCIMUserSchema.enterprise, path.attribute, path.subAttribute) }
        return (nil, path.attribute, path.subAttribute)
    }

    private static func key(_ object: JSONObject, _ name: String) -> String? {
        object.keys.first { SCIMName.equal($0, name) }
    }

    private static func copy(_ path: SCIMAttributePath, from resource: JSONObject, into result: inout JSONObject) {
        let (container, attribute, sub) = location(path)
        if let container {
            guard let containerKey = key(resource, container), case .object(let source)? = resource[containerKey] else { return }
            var target: JSONObject = if case .object(let existing)? = result[containerKey] { existing } else { [:] }
            copyMember(attribute, sub: sub, from: source, into: &target)
            if !target.isEmpty { result[containerKey] = .object(target) }
        } else {
            copyMember(attribute, sub: sub, from: resource, into: &result)
        }
    }

    private static func copyMember(_ attribute: String, sub: String?, from source: JSONObject, into target: inout JSONObject) {
        guard let name = key(source, attribute), let value = source[name] else { return }
        guard let sub else { target[name] = value; return }
        switch value {
        case .object(let object):
            guard let subName = key(object, sub), let subValue = object[subName] else { return }
            var merged: JSONObject = if case .object(let existing)? = target[name] { existing } else { [:] }
            merged[subName] = subValue
            target[name] = .object(merged)
        case .array(let values):
            target[name] = .array(values.compactMap { element in
                guard case .object(let object) = element, let subName = key(object, sub), let subValue = object[subName] else { return nil }
                return .object([subName: subValue])
            })
        default:
            return
        }
    }

    private static func remove(_ path: SCIMAttributePath, from result: inout JSONObject) {
        let (container, attribute, sub) = location(path)
        if SCIMName.equal(attribute, "id") || SCIMName.equal(attribute, "schemas") { return }
        if let container {
            guard let containerKey = key(result, container), case .object(var object)? = result[containerKey] else { return }
            removeMember(attribute, sub: sub, from: &object)
            result[containerKey] = object.isEmpty ? nil : .object(object)
        } else {
            removeMember(attribute, sub: sub, from: &result)
        }
    }

    private static func removeMember(_ attribute: String, sub: String?, from object: inout JSONObject) {
        guard let name = key(object, attribute) else { return }
        guard let sub else { object.removeValue(forKey: name); return }
        switch object[name] {
        case .object(var inner)?:
            if let subName = key(inner, sub) { inner.removeValue(forKey: subName) }
            object[name] = .object(inner)
        case .array(let values)?:
            object[name] = .array(values.map { element in
                guard case .object(var inner) = element else { return element }
                if let subName = key(inner, sub) { inner.removeValue(forKey: subName) }
                return .object(inner)
            })
        default:
            return
        }
    }
}
