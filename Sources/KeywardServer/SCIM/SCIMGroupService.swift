// What the SCIM Groups endpoints do: search, read, create, replace, patch and delete a realm's groups.
import Foundation
import KeywardHTTPInput
import KeywardJOSE

/// The logic behind `/Groups`. Members are users of the realm, checked through `UserService`; membership changes are
/// written in SQL (a PATCH adding one member to a group of ten thousand writes one row), in one transaction with the
/// group's revision, compared when `If-Match` is sent.
struct SCIMGroupService: Sendable {
    let store: any SCIMGroupStore
    let users: UserService
    let clock: any KeywardClock
    let publicURL: String

    func list(realm: String, filter: String?, startIndex: Int, count: Int, withMembers: Bool) async throws -> (total: Int, resources: [JSONObject]) {
        var match: SCIMGroupMatch?
        if let filter { match = try SCIMGroupFilter.match(try SCIMFilter.read(filter)) }
        let page = try await store.groups(realm: realm, match: match, offset: startIndex - 1, limit: count)
        var resources: [JSONObject] = []
        for group in page.groups {
            let members = withMembers ? try await store.members(realm: realm, groupId: group.id) : nil
            resources.append(SCIMGroupResource.render(group, members: members, base: base(realm)))
        }
        return (page.total, resources)
    }

    func group(realm: String, id: String, withMembers: Bool = true) async throws -> (SCIMGroup, JSONObject) {
        let group = try await existing(realm: realm, id: id)
        let members = withMembers ? try await store.members(realm: realm, groupId: id) : nil
        return (group, SCIMGroupResource.render(group, members: members, base: base(realm)))
    }

    func create(realm: String, body: JSONObject) async throws -> (SCIMGroup, JSONObject) {
        let input = try SCIMGroupResource.read(body)
        try await checkMembers(input.members, realm: realm)
        let now = clock.now()
        let group = SCIMGroup(
            realm: realm, id: SecureRandom.timeOrderedUUIDString(at: now), displayName: input.displayName, externalId: input.externalId,
            createdAt: StorageTime.asStored(now)
        )
        try await store.createGroup(group, members: input.members)
        return (group, SCIMGroupResource.render(group, members: input.members.uniqued, base: base(realm)))
    }

    func replace(realm: String, id: String, body: JSONObject, ifMatch: [String]) async throws -> (SCIMGroup, JSONObject) {
        let input = try SCIMGroupResource.read(body)
        let current = try await existing(realm: realm, id: id)
        let expected = try SCIMPrecondition.expectedRevision(ifMatch, current: current.revision)
        try await checkMembers(input.members, realm: realm)
        let change = SCIMGroupChange(displayName: input.displayName, externalId: .some(input.externalId), replaceMembers: input.members)
        return try await apply(change, realm: realm, id: id, expectedRevision: expected)
    }

    func patch(realm: String, id: String, body: JSONObject, ifMatch: [String]) async throws -> (SCIMGroup, JSONObject) {
        let current = try await existing(realm: realm, id: id)
        let expected = try SCIMPrecondition.expectedRevision(ifMatch, current: current.revision)
        let change = try SCIMGroupPatch.change(body, groupId: id)
        try await checkMembers((change.replaceMembers ?? []) + change.addMembers, realm: realm)
        return try await apply(change, realm: realm, id: id, expectedRevision: expected)
    }

    func delete(realm: String, id: String, ifMatch: [String]) async throws {
        let current = try await existing(realm: realm, id: id)
        let expected = try SCIMPrecondition.expectedRevision(ifMatch, current: current.revision)
        switch try await store.deleteGroup(realm: realm, id: id, expectedRevision: expected) {
        case .updated: return
        case .notFound: throw notFound(realm: realm, id: id)
        case .stale(let revision): throw stale(revision)
        }
    }

    private func apply(_ change: SCIMGroupChange, realm: String, id: String, expectedRevision: Int64?) async throws -> (SCIMGroup, JSONObject) {
        switch try await store.updateGroup(realm: realm, id: id, change: change, expectedRevision: expectedRevision) {
        case .updated(let group):
            return (group, SCIMGroupResource.render(group, members: try await store.members(realm: realm, groupId: id), base: base(realm)))
        case .notFound: throw notFound(realm: realm, id: id)
        case .stale(let revision): throw stale(revision)
        }
    }

    /// Members must be users of the realm: one that is not is named in a 400, before anything is written.
    private func checkMembers(_ ids: [String], realm: String) async throws {
        let wanted = ids.uniqued
        guard !wanted.isEmpty else { return }
        var found: Set<String> = []
        for start in stride(from: 0, to: wanted.count, by: 500) {
            found.formUnion(try await users.existingIds(realm: realm, ids: Array(wanted[start..<min(start + 500, wanted.count)])))
        }
        if let missing = wanted.first(where: { !found.contains($0) }) {
            throw SCIMError(.badRequest, .invalidValue, "member '\(missing.prefix(100))' is not a user of realm '\(realm)'")
        }
    }

    private func existing(realm: String, id: String) async throws -> SCIMGroup {
        guard let group = try await store.group(realm: realm, id: id) else { throw notFound(realm: realm, id: id) }
        return group
    }

    private func notFound(realm: String, id: String) -> SCIMError {
        SCIMError(.notFound, nil, "no group with id '\(id.prefix(100))' in realm '\(realm)'")
    }

    private func stale(_ revision: Int64) -> SCIMError {
        SCIMError(.preconditionFailed, nil, "the group changed since that version: it is at \(SCIMVersion.tag(revision)) now")
    }

    func base(_ realm: String) -> String { SCIMPaths.base(publicURL: publicURL, realm: realm) }
}

extension Array where Element == String {
    /// The strings in their first order, each once.
    var uniqued: [String] {
        var seen: Set<String> = []
        return filter { seen.insert($0).inserted }
    }
}

/// A PATCH on a group (RFC 7644 §3.5.2) as a `SCIMGroupChange`, in the shapes directories send: Entra ID adds
/// members with `{"op": "Add", "path": "members", "value": [{"value": id}]}` and removes them with `Remove` and the
/// same value, or with `members[value eq "id"]`; Okta renames with a no-path `replace` whose value names `id` and
/// `displayName`, and replaces the member list with `replace members`.
enum SCIMGroupPatch {
    static func change(_ body: JSONObject, groupId: String) throws(SCIMError) -> SCIMGroupChange {
        var change = SCIMGroupChange()
        for step in try SCIMPatch.steps(body) {
            if let path = step.path {
                try apply(step.op, path, step.value, to: &change, groupId: groupId)
                continue
            }
            guard step.op != .remove, case .object(let values)? = step.value else {
                throw SCIMError(.badRequest, .invalidValue, "operation \(step.index): without a 'path', \(step.op.rawValue) takes an object of attributes")
            }
            for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                if SCIMName.equal(key, "id") {
                    guard value.stringValue == groupId else { throw SCIMError(.badRequest, .mutability, "'id' is read-only") }
                    continue
                }
                try apply(step.op, SCIMPatchPath(attribute: .init(attribute: key)), value, to: &change, groupId: groupId)
            }
        }
        return change
    }

    private static func apply(
        _ op: SCIMPatch.Operation, _ path: SCIMPatchPath, _ value: JSONValue?, to change: inout SCIMGroupChange, groupId: String
    ) throws(SCIMError) {
        guard path.attribute.schema.map({ SCIMName.equal($0, SCIMGroupResource.schema) }) ?? true else {
            throw SCIMError(.badRequest, .invalidPath, "'\(path)' names an unknown schema")
        }
        switch SCIMName.folded(path.attribute.attribute) {
        case "displayname" where path.valueFilter == nil && path.attribute.subAttribute == nil:
            guard op != .remove else { throw SCIMError(.badRequest, .mutability, "'displayName' is required: replace it instead") }
            guard let name = value?.stringValue, !name.isEmpty else { throw SCIMError(.badRequest, .invalidValue, "'displayName' is a non-empty string") }
            change.displayName = try Members.checked(name, "displayName")
        case "externalid" where path.valueFilter == nil && path.attribute.subAttribute == nil:
            if op == .remove {
                change.externalId = .some(nil)
            } else {
                guard let id = value?.stringValue else { throw SCIMError(.badRequest, .invalidValue, "'externalId' is a string") }
                change.externalId = .some(try Members.checked(id, "externalId"))
            }
        case "members":
            try applyToMembers(op, path, value, to: &change)
        case "id", "meta", "schemas":
            throw SCIMError(.badRequest, .mutability, "'\(path.attribute.attribute)' is read-only")
        default:
            throw SCIMError(.badRequest, .invalidPath, "'\(path)' names no attribute Groups keep (displayName, externalId, members)")
        }
    }

    private static func applyToMembers(_ op: SCIMPatch.Operation, _ path: SCIMPatchPath, _ value: JSONValue?, to change: inout SCIMGroupChange) throws(SCIMError) {
        if let filter = path.valueFilter {
            // members[value eq "id"]: only removing a named member means something for a list of ids.
            guard op == .remove, path.subAttribute == nil, case .compare(let inner, .eq, .string(let id)) = filter, SCIMName.equal(inner.attribute, "value") else {
                throw SCIMError(.badRequest, .invalidPath, "'\(path)': members are removed with members[value eq \"<id>\"]")
            }
            change.removeMembers.append(id)
            return
        }
        guard path.attribute.subAttribute == nil else { throw SCIMError(.badRequest, .invalidPath, "'\(path)': members are changed whole") }
        let ids = try SCIMGroupResource.memberIds(value, "members")
        switch op {
        case .add:
            change.addMembers += ids
        case .replace:
            change.replaceMembers = ids
            change.addMembers = []
            change.removeMembers = []
        case .remove:
            // Without a value every member goes; with one (Entra ID), the members it names.
            if value == nil || value == .null {
                change.replaceMembers = []
                change.addMembers = []
            } else {
                change.removeMembers += ids
            }
        }
        guard change.addMembers.count + change.removeMembers.count <= SCIMGroupResource.maxMembers else {
            throw SCIMError(.badRequest, .invalidValue, "a PATCH changes at most \(SCIMGroupResource.maxMembers) members")
        }
    }
}
