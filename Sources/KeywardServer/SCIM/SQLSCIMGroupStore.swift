// The scim_groups and scim_group_members tables, and searching groups.
import Foundation
import SQLKit

/// Which groups a search wants (a SCIM filter on Groups, `SCIMGroupFilter`): names compare without regard to ASCII
/// case, ids and external ids exactly.
indirect enum SCIMGroupMatch: Sendable, Equatable {
    enum Attribute: Sendable, Equatable { case id, displayName, externalId }

    case compare(Attribute, UserComparison, String?)
    case present(Attribute)
    /// A member is the user with this id (`members.value eq "…"`, `members[value eq "…"]`).
    case member(String)
    case hasMembers
    case and(SCIMGroupMatch, SCIMGroupMatch)
    case or(SCIMGroupMatch, SCIMGroupMatch)
    case not(SCIMGroupMatch)
}

struct SQLSCIMGroupStore: SCIMGroupStore {
    let database: KeywardDatabase

    func createGroup(_ group: SCIMGroup, members: [String]) async throws {
        try await StoreErrorMapping.mapping(
            "createGroup", conflict: "realm '\(group.realm)' has a group with id '\(group.id)' already",
            missingParent: "a member is not a user of realm '\(group.realm)'"
        ) {
            try await database.transaction { session in
                try await session.raw("""
                    INSERT INTO scim_groups (realm, id, display_name, display_name_folded, external_id, created_at, revision)
                    VALUES (\(bind: group.realm), \(bind: group.id), \(bind: group.displayName), \(bind: UserNameFolding.folded(group.displayName)),
                        \(bind: group.externalId), \(bind: StorageTime.milliseconds(group.createdAt)), \(bind: group.revision))
                    """).run()
                try await Self.add(members, realm: group.realm, groupId: group.id, on: session)
            }
        }
    }

    func group(realm: String, id: String) async throws -> SCIMGroup? {
        try await StoreErrorMapping.mapping("group(realm:id:)") {
            try await database.sql.raw("SELECT \(unsafeRaw: Self.columns) FROM scim_groups g WHERE g.realm = \(bind: realm) AND g.id = \(bind: id)")
                .first().map(Self.group(from:))
        }
    }

    func members(realm: String, groupId: String) async throws -> [String] {
        try await StoreErrorMapping.mapping("members(realm:groupId:)") {
            try await database.sql.raw("""
                SELECT user_id FROM scim_group_members WHERE realm = \(bind: realm) AND group_id = \(bind: groupId) ORDER BY user_id
                """).all().map { try $0.decode(column: "user_id", as: String.self) }
        }
    }

    func groups(realm: String, match: SCIMGroupMatch?, offset: Int, limit: Int) async throws -> (total: Int, groups: [SCIMGroup]) {
        var clause: SQLQueryString = "g.realm = \(bind: realm)"
        if let match { clause = clause + " AND " + condition(match) }
        let from: SQLQueryString = "FROM scim_groups g WHERE " + clause
        return try await StoreErrorMapping.mapping("groups(realm:match:)") {
            let total = try await database.sql.raw("SELECT count(*) AS n " + from).first()?.decode(column: "n", as: Int.self) ?? 0
            guard limit > 0, offset < total else { return (total, []) }
            let groups = try await database.sql.raw(
                "SELECT \(unsafeRaw: Self.columns) " + from
                    + " ORDER BY \(unsafeRaw: SQLUserMatch(engine: database.engine).pageOrder("g.id", filtered: match != nil))"
                    + " LIMIT \(bind: limit) OFFSET \(bind: offset)"
            ).all().map(Self.group(from:))
            return (total, groups)
        }
    }

    func updateGroup(realm: String, id: String, change: SCIMGroupChange, expectedRevision: Int64?) async throws -> SCIMGroupUpdate {
        var statement: SQLQueryString = "UPDATE scim_groups SET revision = revision + 1"
        if let name = change.displayName {
            statement = statement + ", display_name = \(bind: name), display_name_folded = \(bind: UserNameFolding.folded(name))"
        }
        if let externalId = change.externalId { statement = statement + ", external_id = \(bind: externalId)" }
        statement = statement + " WHERE realm = \(bind: realm) AND id = \(bind: id)"
        if let expectedRevision { statement = statement + " AND revision = \(bind: expectedRevision)" }
        statement = statement + " RETURNING \(unsafeRaw: Self.plainColumns)"
        let updated = try await StoreErrorMapping.mapping("updateGroup", missingParent: "a member is not a user of realm '\(realm)'") {
            try await database.transaction { [statement] session -> SCIMGroup? in
                guard let group = try await session.raw(statement).first().map(Self.group(from:)) else { return nil }
                if let members = change.replaceMembers {
                    try await session.raw("DELETE FROM scim_group_members WHERE realm = \(bind: realm) AND group_id = \(bind: id)").run()
                    try await Self.add(members, realm: realm, groupId: id, on: session)
                }
                if !change.removeMembers.isEmpty {
                    try await session.raw("""
                        DELETE FROM scim_group_members WHERE realm = \(bind: realm) AND group_id = \(bind: id) AND user_id IN (\(binds: change.removeMembers))
                        """).run()
                }
                try await Self.add(change.addMembers, realm: realm, groupId: id, on: session)
                return group
            }
        }
        if let updated { return .updated(updated) }
        guard let current = try await group(realm: realm, id: id) else { return .notFound }
        return .stale(current: current.revision)
    }

    func deleteGroup(realm: String, id: String, expectedRevision: Int64?) async throws -> SCIMGroupUpdate {
        var statement: SQLQueryString = "DELETE FROM scim_groups WHERE realm = \(bind: realm) AND id = \(bind: id)"
        if let expectedRevision { statement = statement + " AND revision = \(bind: expectedRevision)" }
        statement = statement + " RETURNING \(unsafeRaw: Self.plainColumns)"
        let deleted = try await StoreErrorMapping.mapping("deleteGroup") { try await database.sql.raw(statement).first().map(Self.group(from:)) }
        if let deleted { return .updated(deleted) }
        guard let current = try await group(realm: realm, id: id) else { return .notFound }
        return .stale(current: current.revision)
    }

    /// Adds members that are not members yet (adding one twice is no error, RFC 7644 §3.5.2.1).
    private static func add(_ members: [String], realm: String, groupId: String, on session: any SQLDatabase) async throws {
        for member in Set(members).sorted() {
            try await session.raw("""
                INSERT INTO scim_group_members (realm, group_id, user_id) VALUES (\(bind: realm), \(bind: groupId), \(bind: member))
                ON CONFLICT (realm, group_id, user_id) DO NOTHING
                """).run()
        }
    }

    private func condition(_ match: SCIMGroupMatch) -> SQLQueryString {
        switch match {
        case .and(let left, let right): return "(" + condition(left) + " AND " + condition(right) + ")"
        case .or(let left, let right): return "(" + condition(left) + " OR " + condition(right) + ")"
        case .not(let inner): return "(NOT " + condition(inner) + ")"
        case .member(let userId):
            return "EXISTS (SELECT 1 FROM scim_group_members m WHERE m.realm = g.realm AND m.group_id = g.id AND m.user_id = \(bind: userId))"
        case .hasMembers:
            return "EXISTS (SELECT 1 FROM scim_group_members m WHERE m.realm = g.realm AND m.group_id = g.id)"
        case .present(let attribute):
            return attribute == .externalId ? "COALESCE(g.external_id <> '', FALSE)" : "TRUE"
        case .compare(let attribute, let comparison, let value):
            let column = switch attribute {
            case .id: "g.id"
            case .displayName: "g.display_name_folded"
            case .externalId: "g.external_id"
            }
            guard let value else {
                let present = self.condition(.present(attribute))
                return comparison == .equal ? "(NOT " + present + ")" : present
            }
            let text = attribute == .displayName ? UserNameFolding.folded(value) : value
            return SQLUserMatch(engine: database.engine).textComparison(column, comparison, text)
        }
    }

    private static let plainColumns = "realm, id, display_name, external_id, created_at, revision"
    private static let columns = "g.realm AS realm, g.id AS id, g.display_name AS display_name, g.external_id AS external_id, g.created_at AS created_at, g.revision AS revision"

    private static func group(from row: any SQLRow) throws -> SCIMGroup {
        SCIMGroup(
            realm: try row.decode(column: "realm", as: String.self), id: try row.decode(column: "id", as: String.self),
            displayName: try row.decode(column: "display_name", as: String.self), externalId: try row.decode(column: "external_id", as: String?.self),
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            revision: try row.decode(column: "revision", as: Int64.self)
        )
    }
}
