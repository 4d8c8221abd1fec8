// Tests: deleting a user over the admin API deletes the user its id names, whatever happens to names meanwhile.
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// A removal step standing in for a second operator who acts while the deletion runs (a provider's revocation call can
/// hold a removal for seconds): it renames the user being deleted and gives its old name to a new user.
private struct RenameWhileRemoving: UserRemovalStep {
    let users: UserService

    func removing(realm: String, user: User, identities: [ExternalIdentity]) async throws -> (@Sendable () async -> Void)? {
        guard user.username == "doomed" else { return nil }
        _ = try await users.update(realm: realm, id: user.id, change: UserChange(username: "doomed-old"), expectedRevision: nil)
        _ = try await users.createUser(realm: realm, username: "doomed", password: "the newcomer")
        return nil
    }
}

final class AdminUserDeletionRaceTests: XCTestCase {
    /// Security review of issue 33 (medium): the deletion checked If-Match on the id, then deleted by name, so a rename and
    /// a new user of the old name between the two took the newcomer's account instead.
    func testTheDeletionFollowsTheIdNotTheName() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.usersRead, .usersWrite])
            server.runtime.accounts.plugins.add(removalStep: RenameWhileRemoving(users: server.runtime.accounts.users))
            let made = try await admin.call(.post, "/admin/realms/demo/users", json: ["username": .string("doomed")])
            let id = try XCTUnwrap(made.json["id"]?.stringValue, "the user was not made: \(made.status) \(made.json)")
            let deleted = try await admin.call(.delete, "/admin/realms/demo/users/\(id)", headers: [.ifMatch: made.etag ?? ""])
            XCTAssertEqual(deleted.status, .noContent, "\(deleted.json)")
            let gone = try await server.runtime.accounts.users.user(realm: "demo", id: id)
            XCTAssertNil(gone, "the user the id names is deleted")
            let newcomer = try await server.runtime.accounts.users.user(realm: "demo", username: "doomed")
            XCTAssertNotNil(newcomer, "the newcomer who took the old name keeps their account")
        }
    }

    /// A stale If-Match leaves the user and everything theirs as it was.
    func testAStaleETagDeletesNothing() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.usersRead, .usersWrite])
            let made = try await admin.call(.post, "/admin/realms/demo/users", json: ["username": .string("kept")])
            let id = try XCTUnwrap(made.json["id"]?.stringValue, "the user was not made: \(made.status) \(made.json)")
            _ = try await admin.call(.patch, "/admin/realms/demo/users/\(id)", json: ["username": .string("kept-renamed")])
            let stale = try await admin.call(.delete, "/admin/realms/demo/users/\(id)", headers: [.ifMatch: made.etag ?? ""])
            XCTAssertEqual(stale.status, .preconditionFailed)
            let user = try await server.runtime.accounts.users.user(realm: "demo", id: id)
            XCTAssertEqual(user?.enabled, true, "nothing was done to the user")
        }
    }
}
