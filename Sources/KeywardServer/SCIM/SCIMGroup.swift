// A realm's group as its directory keeps it, and the store of groups and their members.
import Foundation

struct SCIMGroup: Sendable, Equatable {
    var realm: String
    var id: String
    var displayName: String
    var externalId: String?
    var createdAt: Date
    var revision: Int64 = 1
}

/// What a change to a group does: its name and external id (nil: unchanged; `.some(nil)`: removed), and its members
/// replaced, or some added and some removed.
struct SCIMGroupChange: Sendable, Equatable {
    var displayName: String?
    var externalId: String??
    var replaceMembers: [String]?
    var addMembers: [String] = []
    var removeMembers: [String] = []
}

enum SCIMGroupUpdate: Sendable, Equatable {
    case updated(SCIMGroup)
    case notFound
    case stale(current: Int64)
}

protocol SCIMGroupStore: Sendable {
    /// Inserts a group with its members in one transaction; `.notFound` when a member is no user of the realm.
    func createGroup(_ group: SCIMGroup, members: [String]) async throws
    func group(realm: String, id: String) async throws -> SCIMGroup?
    func members(realm: String, groupId: String) async throws -> [String]
    func groups(realm: String, match: SCIMGroupMatch?, offset: Int, limit: Int) async throws -> (total: Int, groups: [SCIMGroup])
    /// Applies `change` in one transaction, only while the group is at `expectedRevision` (when given).
    func updateGroup(realm: String, id: String, change: SCIMGroupChange, expectedRevision: Int64?) async throws -> SCIMGroupUpdate
    func deleteGroup(realm: String, id: String, expectedRevision: Int64?) async throws -> SCIMGroupUpdate
}
