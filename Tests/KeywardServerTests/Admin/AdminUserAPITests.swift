// Tests: the admin API's users, end to end through the router: create, read, list, update with If-Match, delete.
import Foundation
import HTTPTypes
import KeywardJOSE
import KeywardServer
import XCTest

final class AdminUserAPITests: XCTestCase {
    func testUserLifecycleWithRevisions() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.usersRead, .usersWrite])
            let created = try await admin.call(.post, "/admin/realms/demo/users", json: ["username": .string("ada"), "password": .string("correct horse")])
            XCTAssertEqual(created.status, .created, "\(created.json)")
            XCTAssertEqual(created.etag, "\"1\"")
            let id = try XCTUnwrap(created.json["id"]?.stringValue)
            XCTAssertEqual(created.headers[.location], "/admin/realms/demo/users/\(id)")
            XCTAssertEqual(created.json["has_password"], .bool(true))

            let read = try await admin.call(.get, "/admin/realms/demo/users/\(id)")
            XCTAssertEqual(read.status, .ok)
            XCTAssertEqual(read.json["username"]?.stringValue, "ada")
            XCTAssertEqual(read.json["etag"]?.stringValue, read.etag)

            let renamed = try await admin.call(.patch, "/admin/realms/demo/users/\(id)", json: ["username": .string("ada.l")], headers: [.ifMatch: "\"1\""])
            XCTAssertEqual(renamed.status, .ok, "\(renamed.json)")
            XCTAssertEqual(renamed.etag, "\"2\"")
            XCTAssertEqual(renamed.json["username"]?.stringValue, "ada.l")

            // A second writer still holding revision 1 loses: nothing is written.
            let lost = try await admin.call(.patch, "/admin/realms/demo/users/\(id)", json: ["enabled": .bool(false)], headers: [.ifMatch: "\"1\""])
            XCTAssertEqual(lost.status, .preconditionFailed)
            XCTAssertEqual(lost.code, "precondition_failed")
            XCTAssertEqual(lost.headers[.contentType], "application/problem+json")
            XCTAssertEqual(lost.json["type"]?.stringValue, "urn:keyward:problem:precondition_failed")
            XCTAssertEqual(lost.json["status"]?.intValue, 412)
            let stillEnabled = try await server.runtime.accounts.users.user(realm: "demo", id: id)
            XCTAssertEqual(stillEnabled?.enabled, true)
            // A weak tag never matches (RFC 9110 §13.1.1), one of several strong tags does.
            let weak = try await admin.call(.patch, "/admin/realms/demo/users/\(id)", json: ["enabled": .bool(false)], headers: [.ifMatch: "W/\"2\""])
            XCTAssertEqual(weak.status, .preconditionFailed)
            let listed = try await admin.call(.patch, "/admin/realms/demo/users/\(id)", json: ["enabled": .bool(false)], headers: [.ifMatch: "\"7\", \"2\""])
            XCTAssertEqual(listed.status, .ok, "\(listed.json)")
            XCTAssertEqual(listed.json["enabled"], .bool(false))
            let malformed = try await admin.call(.patch, "/admin/realms/demo/users/\(id)", json: ["enabled": .bool(true)], headers: [.ifMatch: "3"])
            XCTAssertEqual(malformed.status, .badRequest)
            XCTAssertEqual(malformed.json["field"]?.stringValue, "If-Match")

            let password = try await admin.call(.put, "/admin/realms/demo/users/\(id)/password", json: ["password": .string("another one")])
            XCTAssertEqual(password.status, .noContent)
            let check = try await server.runtime.accounts.users.authenticate(realm: "demo", username: "ada.l", password: "another one")
            guard case .disabled = check else { return XCTFail("the new password does not open the (disabled) account: \(check)") }

            let taken = try await admin.call(.patch, "/admin/realms/demo/users/\(id)", json: ["username": .string("test")])
            XCTAssertEqual(taken.status, .conflict, "the demo realm's test user holds that name: \(taken.json)")

            let stale = try await admin.call(.delete, "/admin/realms/demo/users/\(id)", headers: [.ifMatch: "\"2\""])
            XCTAssertEqual(stale.status, .preconditionFailed)
            let deleted = try await admin.call(.delete, "/admin/realms/demo/users/\(id)")
            XCTAssertEqual(deleted.status, .noContent)
            let gone = try await admin.call(.get, "/admin/realms/demo/users/\(id)")
            XCTAssertEqual(gone.status, .notFound)
            XCTAssertEqual(gone.code, "not_found")
        }
    }

    func testListPagesByCursorAndFilters() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.usersRead, .usersWrite])
            for index in 0..<7 {
                let made = try await admin.call(.post, "/admin/realms/demo/users", json: ["username": .string("page-\(index)"), "enabled": .bool(index % 2 == 0)])
                XCTAssertEqual(made.status, .created, "\(made.json)")
            }
            var names: [String] = []
            var path = "/admin/realms/demo/users?limit=3&username_prefix=page-"
            for _ in 0..<5 {
                let page = try await admin.call(.get, path)
                XCTAssertEqual(page.status, .ok, "\(page.json)")
                let items = try XCTUnwrap(page.json["items"]?.arrayValue)
                XCTAssertLessThanOrEqual(items.count, 3)
                names += items.compactMap { $0.objectValue?["username"]?.stringValue }
                guard let next = page.json["next_cursor"]?.stringValue else { break }
                XCTAssertNotNil(page.headers[HTTPField.Name("Link")!])
                path = "/admin/realms/demo/users?limit=3&username_prefix=page-&cursor=\(next)"
            }
            XCTAssertEqual(names.sorted(), (0..<7).map { "page-\($0)" }, "every user once")

            let disabled = try await admin.call(.get, "/admin/realms/demo/users?enabled=false&username_prefix=page-")
            XCTAssertEqual(disabled.json["items"]?.arrayValue?.compactMap { $0.objectValue?["username"]?.stringValue }.sorted(), ["page-1", "page-3", "page-5"])
            XCTAssertNil(disabled.json["next_cursor"])

            for bad in ["limit=0", "limit=201", "limit=x", "cursor=!!", "cursor=" + Base64URL.encode(Array("no".utf8)), "enabled=yes", "username_prefix="] {
                let refused = try await admin.call(.get, "/admin/realms/demo/users?" + bad)
                XCTAssertEqual(refused.status, .badRequest, bad)
                XCTAssertEqual(refused.code, "invalid_request", bad)
                XCTAssertNotNil(refused.json["field"], bad)
            }
        }
    }

    func testDisablingEndsSessionsAndEveryWriteNamesTheClient() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.usersRead, .usersWrite])
            let found = try await server.runtime.accounts.users.user(realm: "demo", username: "test")
            let alice = try XCTUnwrap(found)
            _ = try await TestBrowser(client).signIn()
            let before = try await admin.call(.get, "/admin/realms/demo/users/\(alice.id)/sessions")
            XCTAssertEqual(before.json["items"]?.arrayValue?.count, 1, "\(before.json)")

            let disabled = try await admin.call(.patch, "/admin/realms/demo/users/\(alice.id)", json: ["enabled": .bool(false)])
            XCTAssertEqual(disabled.status, .ok)
            let after = try await admin.call(.get, "/admin/realms/demo/users/\(alice.id)/sessions")
            XCTAssertEqual(after.json["items"]?.arrayValue?.count, 0)

            let events = try await server.runtime.audit.events(realm: "demo", limit: 50)
            let disabling = try XCTUnwrap(events.first { $0.type == .userDisabled && $0.userId == alice.id })
            XCTAssertEqual(disabling.clientId, "ops")
            XCTAssertTrue(disabling.detailsJSON.contains("\"via\":\"admin-api\""), disabling.detailsJSON)
            let change = try XCTUnwrap(events.first { $0.type == .adminChange })
            XCTAssertEqual(change.clientId, "ops")
            XCTAssertTrue(change.detailsJSON.contains("PATCH"), change.detailsJSON)
            XCTAssertFalse(events.contains { $0.type == .adminChange && $0.detailsJSON.contains("GET") }, "reads are not writes")
        }
    }
}
