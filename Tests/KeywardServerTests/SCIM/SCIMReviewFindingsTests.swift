// Tests: what the review of SCIM Users found — a refused password leaves nothing written, projections are checked
// before anything is, unassigned e-mails in filters, a new primary value, removing a value's `value`, bounds per
// operation, lengths in characters, searches as reads, meta.created found by the value it reads back as.
import Foundation
import HTTPTypes
import KeywardJOSE
import KeywardServer
import XCTest

final class SCIMReviewFindingsTests: XCTestCase {
    static let patchOp = "urn:ietf:params:scim:api:messages:2.0:PatchOp"

    static func patch(_ operations: [JSONValue]) -> JSONObject {
        ["schemas": .array([.string(patchOp)]), "Operations": .array(operations)]
    }

    static func op(_ op: String, _ path: String?, _ value: JSONValue? = nil) -> JSONValue {
        var object: JSONObject = ["op": .string(op)]
        if let path { object["path"] = .string(path) }
        if let value { object["value"] = value }
        return .object(object)
    }

    func testARefusedPasswordOrProjectionWritesNothing() async throws {
        try await TestServer.forEachEngine { server, client in
            let directory = try await SCIMDirectory.make(server, client)
            let users = server.runtime.accounts.users
            let found = try await users.user(realm: "demo", username: "test")
            let test = try XCTUnwrap(found)
            _ = try await TestBrowser(client).signIn()
            for password in ["", String(repeating: "é", count: 600)] {
                let answer = try await directory.call(.patch, "/Users/" + test.id, json: Self.patch([
                    Self.op("replace", "active", .bool(false)), Self.op("replace", "password", .string(password)),
                ]))
                SCIMTokenTests.assertSCIMError(answer, .badRequest, "password of \(password.utf8.count) bytes")
            }
            let projected = try await directory.call(.put, "/Users/" + test.id + "?attributes=emails%5Btype%20eq%20%22w%22%5D", json: [
                "schemas": .array([.string(SCIMUserAPITests.core)]), "userName": .string("renamed"), "active": .bool(false),
            ])
            SCIMTokenTests.assertSCIMError(projected, .badRequest, "a value filter in attributes")
            let created = try await directory.call(.post, "/Users?excludedAttributes=a&excludedAttributes=b", json: [
                "schemas": .array([.string(SCIMUserAPITests.core)]), "userName": .string("never"),
            ])
            SCIMTokenTests.assertSCIMError(created, .badRequest, "a parameter twice")

            let after = try await users.user(realm: "demo", id: test.id)
            XCTAssertEqual(after?.enabled, true)
            XCTAssertEqual(after?.username, "test")
            XCTAssertEqual(after?.revision, test.revision, "nothing was written")
            let never = try await users.user(realm: "demo", username: "never")
            XCTAssertNil(never)
            let sessions = try await server.runtime.accounts.browserSessions.sessions(realm: "demo", userId: test.id)
            XCTAssertEqual(sessions.count, 1, "the session was not ended")
        }
    }

    func testUnassignedEmailsPrimariesAndValueRemoval() async throws {
        try await TestServer.forEachEngine { server, client in
            let directory = try await SCIMDirectory.make(server, client)
            // `test` (the demo user) has no e-mail; `mia` has one.
            let mia = try await directory.call(.post, "/Users", json: SCIMUserAPITests.entraUser("mia", externalId: "m", email: "mia@example.com"))
            let id = try XCTUnwrap(mia.json["id"]?.stringValue)
            var found = try await directory.find("emails eq null")
            XCTAssertEqual(found.userNames, ["test"])
            found = try await directory.find("emails.value ne \"mia@example.com\"")
            XCTAssertEqual(found.userNames, ["test"], "an unassigned attribute is not equal to a value")
            found = try await directory.find("emails ne null")
            XCTAssertEqual(found.userNames, ["mia"])

            // Okta adds a primary address beside the primary one: the new one is primary, the old one no longer.
            let added = try await directory.call(.patch, "/Users/" + id, json: Self.patch([
                Self.op("add", "emails", .array([.object(["value": .string("mia@home.example"), "type": .string("home"), "primary": .bool(true)])])),
            ]))
            XCTAssertEqual(added.status, .ok, "\(added.json)")
            let primaries = added.json["emails"]?.arrayValue?.compactMap { $0.objectValue }.filter { $0["primary"] == .bool(true) }
            XCTAssertEqual(primaries?.map { $0["value"] }, [.string("mia@home.example")])
            // Entra ID clears an address by removing its value: the address goes.
            let removed = try await directory.call(.patch, "/Users/" + id, json: Self.patch([Self.op("Remove", "emails[type eq \"work\"].value")]))
            XCTAssertEqual(removed.status, .ok, "\(removed.json)")
            XCTAssertEqual(removed.json["emails"]?.arrayValue?.count, 1)
            let untyped = try await directory.call(.patch, "/Users/" + id, json: Self.patch([Self.op("remove", "emails.type")]))
            XCTAssertNil(untyped.json["emails"]?.arrayValue?.first?.objectValue?["type"], "a sub-attribute path without a filter reaches every value")

            let many = (0..<25).map { JSONValue.object(["value": .string("m\($0)@example.com")]) }
            let grown = try await directory.call(.patch, "/Users/" + id, json: Self.patch([Self.op("add", "emails", .array(many))]))
            SCIMTokenTests.assertSCIMError(grown, .badRequest, "more than 20 values")
            let combining = "a" + String(repeating: "\u{301}", count: 3000)
            let long = try await directory.call(.patch, "/Users/" + id, json: Self.patch([Self.op("replace", "title", .string(combining))]))
            SCIMTokenTests.assertSCIMError(long, .badRequest, "one letter and 3,000 combining marks")

            let read = try await directory.call(.get, "/Users/" + id)
            let created = try XCTUnwrap(read.json["meta"]?.objectValue?["created"]?.stringValue)
            found = try await directory.find("meta.created eq \"\(created)\"")
            // The test clock stands still, so the demo user was created in the same millisecond.
            XCTAssertTrue(found.userNames.contains("mia"), "the creation time as read back finds the user (\(created)): \(found.userNames)")
        }
    }

    func testAnAdminClientThatOnlyReadsCanSearchByPost() async throws {
        try await TestServer.forEachEngine { server, client in
            let reader = try await AdminClient.make(server, client, clientId: "reader", scopes: [.usersRead])
            let search = try await reader.call(.post, "/scim/v2/realms/demo/Users/.search", json: [
                "schemas": .array([.string("urn:ietf:params:scim:api:messages:2.0:SearchRequest")]), "filter": .string("userName eq \"test\""),
            ])
            XCTAssertEqual(search.status, .ok, "\(search.json)")
            XCTAssertEqual(search.json["totalResults"]?.intValue, 1)
            let write = try await reader.call(.post, "/scim/v2/realms/demo/Users", json: [
                "schemas": .array([.string(SCIMUserAPITests.core)]), "userName": .string("nope"),
            ])
            XCTAssertEqual(write.status, .forbidden)
        }
    }
}
