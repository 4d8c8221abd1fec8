// Tests: SCIM Groups — created with members, found by name and member, renamed and filled in the PATCH shapes
// Entra ID and Okta send, versions, members that are no users refused, a deleted user leaves its groups; the root
// search across users and groups.
import Foundation
import HTTPTypes
import KeywardJOSE
import KeywardServer
import XCTest

final class SCIMGroupAPITests: XCTestCase {
    static let group = "urn:ietf:params:scim:schemas:core:2.0:Group"

    func testGroupsAndTheirMembersAsDirectoriesChangeThem() async throws {
        try await TestServer.forEachEngine { server, client in
            let directory = try await SCIMDirectory.make(server, client)
            var ids: [String] = []
            for name in ["ann", "bob", "cyd"] {
                let made = try await directory.call(.post, "/Users", json: ["schemas": .array([.string(SCIMUserAPITests.core)]), "userName": .string(name)])
                ids.append(try XCTUnwrap(made.json["id"]?.stringValue))
            }
            let created = try await directory.call(.post, "/Groups", json: [
                "schemas": .array([.string(Self.group)]), "displayName": .string("Sales"), "externalId": .string("g-1"),
                "members": .array([.object(["value": .string(ids[0])]), .object(["value": .string(ids[1]), "type": .string("User")])]),
            ])
            XCTAssertEqual(created.status, .created, "\(created.json)")
            XCTAssertEqual(created.headers[.eTag], "W/\"1\"")
            let id = try XCTUnwrap(created.json["id"]?.stringValue)
            XCTAssertEqual(created.json["members"]?.arrayValue?.count, 2)

            var found = try await directory.call(.get, "/Groups?filter=" + "displayName eq \"sales\"".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
            XCTAssertEqual(found.json["totalResults"]?.intValue, 1)
            found = try await directory.call(.get, "/Groups?excludedAttributes=members&filter=" + "members[value eq \"\(ids[1])\"]".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
            XCTAssertEqual(found.json["totalResults"]?.intValue, 1)
            XCTAssertNil(found.json["Resources"]?.arrayValue?.first?.objectValue?["members"], "excludedAttributes=members leaves them out")

            // Entra ID: add a member, remove one by value, rename.
            let entra = try await directory.call(.patch, "/Groups/" + id, json: [
                "schemas": .array([.string(SCIMPatchTestShapes.patchOp)]),
                "Operations": .array([
                    .object(["op": .string("Add"), "path": .string("members"), "value": .array([.object(["value": .string(ids[2])])])]),
                    .object(["op": .string("Remove"), "path": .string("members"), "value": .array([.object(["value": .string(ids[0])])])]),
                    .object(["op": .string("Replace"), "path": .string("displayName"), "value": .string("Sales EMEA")]),
                ]),
            ])
            XCTAssertEqual(entra.status, .ok, "\(entra.json)")
            let members = Set(entra.json["members"]?.arrayValue?.compactMap { $0.objectValue?["value"]?.stringValue } ?? [])
            XCTAssertEqual(members, [ids[1], ids[2]])
            XCTAssertEqual(entra.json["displayName"]?.stringValue, "Sales EMEA")

            // Okta: a member removed by filter, a rename by a no-path replace naming the id.
            let okta = try await directory.call(.patch, "/Groups/" + id, json: [
                "schemas": .array([.string(SCIMPatchTestShapes.patchOp)]),
                "Operations": .array([
                    .object(["op": .string("remove"), "path": .string("members[value eq \"\(ids[1])\"]")]),
                    .object(["op": .string("replace"), "value": .object(["id": .string(id), "displayName": .string("Sales")])]),
                ]),
            ])
            XCTAssertEqual(okta.json["members"]?.arrayValue?.count, 1, "\(okta.json)")
            XCTAssertEqual(okta.json["displayName"]?.stringValue, "Sales")

            let stranger = try await directory.call(.patch, "/Groups/" + id, json: [
                "schemas": .array([.string(SCIMPatchTestShapes.patchOp)]),
                "Operations": .array([.object(["op": .string("add"), "path": .string("members"), "value": .array([.object(["value": .string("nobody")])])])]),
            ])
            SCIMTokenTests.assertSCIMError(stranger, .badRequest, "a member that is no user")
            let nested = try await directory.call(.patch, "/Groups/" + id, json: [
                "schemas": .array([.string(SCIMPatchTestShapes.patchOp)]),
                "Operations": .array([.object(["op": .string("add"), "path": .string("members"), "value": .array([.object(["value": .string(id), "type": .string("Group")])])])]),
            ])
            SCIMTokenTests.assertSCIMError(nested, .badRequest, "a group as a member")
            let stale = try await directory.call(.put, "/Groups/" + id, json: ["schemas": .array([.string(Self.group)]), "displayName": .string("x")],
                                                headers: [.ifMatch: "W/\"1\""])
            SCIMTokenTests.assertSCIMError(stale, .preconditionFailed, "an old version")

            // A user deleted leaves its groups; the group deleted is gone.
            _ = try await directory.call(.delete, "/Users/" + ids[2])
            let after = try await directory.call(.get, "/Groups/" + id)
            XCTAssertNil(after.json["members"], "\(after.json)")
            let search = try await directory.call(.post, "/.search", json: [
                "schemas": .array([.string("urn:ietf:params:scim:api:messages:2.0:SearchRequest")]), "filter": .string("id eq \"\(id)\" or id eq \"\(ids[0])\""),
            ])
            XCTAssertEqual(search.json["totalResults"]?.intValue, 2, "a user and a group: \(search.json)")
            let deleted = try await directory.call(.delete, "/Groups/" + id)
            XCTAssertEqual(deleted.status, .noContent)
            let gone = try await directory.call(.get, "/Groups/" + id)
            SCIMTokenTests.assertSCIMError(gone, .notFound, "a deleted group")
            let types = try await directory.call(.get, "/ResourceTypes")
            XCTAssertEqual(types.json["totalResults"]?.intValue, 2)
        }
    }
}

enum SCIMPatchTestShapes {
    static let patchOp = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
}
