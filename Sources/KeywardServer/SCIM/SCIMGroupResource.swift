// A group as a SCIM Group resource (RFC 7643 §4.2), a Group body read, and a SCIM filter on Groups.
import Foundation
import KeywardHTTPInput
import KeywardJOSE

enum SCIMGroupResource {
    static let schema = "urn:ietf:params:scim:schemas:core:2.0:Group"
    /// The most members one body names; larger groups are filled with PATCH `add` in steps.
    static let maxMembers = 1000

    static func render(_ group: SCIMGroup, members: [String]?, base: String) -> JSONObject {
        var resource: JSONObject = [
            "schemas": .array([.string(schema)]), "id": .string(group.id), "displayName": .string(group.displayName),
            "meta": .object([
                "resourceType": .string("Group"), "created": .string(SCIMDateTime.format(group.createdAt)),
                "location": .string(base + "/Groups/" + group.id), "version": .string(SCIMVersion.tag(group.revision)),
            ]),
        ]
        if let externalId = group.externalId { resource["externalId"] = .string(externalId) }
        if let members, !members.isEmpty {
            resource["members"] = .array(members.map { .object(["value": .string($0), "type": .string("User"), "$ref": .string(base + "/Users/" + $0)]) })
        }
        return resource
    }

    struct Input: Sendable, Equatable {
        var displayName: String
        var externalId: String?
        var members: [String]
    }

    static func read(_ body: JSONObject) throws(SCIMError) -> Input {
        let members = try Members(body, at: nil)
        for urn in try members.schemas(listing: schema) where !(urn.stringValue.map { SCIMName.equal($0, schema) } ?? false) {
            throw SCIMError(.badRequest, .invalidValue, "unknown schema '\(urn.stringValue ?? "")': Groups take \(schema)")
        }
        try members.refuseUnknown(["schemas", "id", "meta", "displayName", "externalId", "members"])
        guard let displayName = try members.text("displayName"), !displayName.isEmpty else {
            throw SCIMError(.badRequest, .invalidValue, "'displayName' is required")
        }
        return Input(displayName: displayName, externalId: try members.text("externalId"), members: try memberIds(members["members"], "members"))
    }

    /// The user ids of a `members` value: `[{"value": id}]` (with `type` `User`, `display` and `$ref` ignored).
    static func memberIds(_ value: JSONValue?, _ name: String) throws(SCIMError) -> [String] {
        switch value {
        case nil, .null?: return []
        case .array(let values)?:
            guard values.count <= maxMembers else {
                throw SCIMError(.badRequest, .invalidValue, "'\(name)' names more than \(maxMembers) members: add them with PATCH in steps")
            }
            return try values.map { item throws(SCIMError) in
                guard case .object(let object) = item else { throw SCIMError(.badRequest, .invalidValue, "each member is an object with a 'value'") }
                let member = try Members(object, at: name)
                try member.refuseUnknown(["value", "type", "display", "$ref"])
                if let type = try member.text("type"), !SCIMName.equal(type, "User") {
                    throw SCIMError(.badRequest, .invalidValue, "members are users: a member of type '\(type)' (nested groups) is not supported")
                }
                guard let id = try member.text("value"), !id.isEmpty else { throw SCIMError(.badRequest, .invalidValue, "each member needs a 'value' (a user's id)") }
                return id
            }
        default:
            throw SCIMError(.badRequest, .invalidValue, "'\(name)' is an array of members")
        }
    }
}

/// A SCIM filter on Groups as `SCIMGroupMatch`: `id`, `displayName`, `externalId` and `members` (`members.value eq`,
/// `members[value eq …]`, `members pr`).
enum SCIMGroupFilter {
    static func match(_ filter: SCIMFilter) throws(SCIMError) -> SCIMGroupMatch {
        switch filter {
        case .and(let left, let right): return .and(try match(left), try match(right))
        case .or(let left, let right): return .or(try match(left), try match(right))
        case .not(let inner): return .not(try match(inner))
        case .present(let path):
            if isMembers(path) { return .hasMembers }
            return .present(try attribute(path))
        case .compare(let path, let op, let value):
            if isMembers(path) {
                guard path.subAttribute.map({ SCIMName.equal($0, "value") }) ?? true, op == .eq, case .string(let id) = value else {
                    throw unsupported("\(path) \(op.rawValue)")
                }
                return .member(id)
            }
            let text: String?
            switch value {
            case .string(let string): text = string
            case .null: text = nil
            default: throw SCIMError(.badRequest, .invalidFilter, "\(path) is a string")
            }
            guard text != nil || op == .eq || op == .ne else { throw SCIMError(.badRequest, .invalidFilter, "null can only be compared with eq or ne") }
            return .compare(try attribute(path), op.comparison, text)
        case .valuePath(let path, let inner):
            guard isMembers(path), case .compare(let innerPath, .eq, .string(let id)) = inner, SCIMName.equal(innerPath.attribute, "value"),
                innerPath.subAttribute == nil
            else { throw unsupported(filter.description) }
            return .member(id)
        }
    }

    private static func isMembers(_ path: SCIMAttributePath) -> Bool {
        (path.schema.map { SCIMName.equal($0, SCIMGroupResource.schema) } ?? true) && SCIMName.equal(path.attribute, "members")
    }

    private static func attribute(_ path: SCIMAttributePath) throws(SCIMError) -> SCIMGroupMatch.Attribute {
        guard path.schema.map({ SCIMName.equal($0, SCIMGroupResource.schema) }) ?? true, path.subAttribute == nil else { throw unsupported(path.description) }
        switch SCIMName.folded(path.attribute) {
        case "id": return .id
        case "displayname": return .displayName
        case "externalid": return .externalId
        default: throw unsupported(path.description)
        }
    }

    private static func unsupported(_ what: String) -> SCIMError {
        SCIMError(.badRequest, .invalidFilter, "filtering on '\(what)' is not supported; Groups filter on id, displayName, externalId and members (value eq)")
    }
}
