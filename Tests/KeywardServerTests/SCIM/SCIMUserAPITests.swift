// Tests: SCIM Users (RFC 7644) as Entra ID and Okta use them — provisioning, filters and paging, PUT, PATCH in both
// directories' shapes, versions, deletion; deactivation ends sessions; every bad input a SCIM error, never a 5xx.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
import KeywardServer
import NIOCore
import XCTest

/// A directory calling a realm's SCIM API with a token made for it.
struct SCIMDirectory {
    let client: any TestClientProtocol
    let token: String
    let realm: String

    static func make(_ server: TestServer, _ client: any TestClientProtocol, realm: String = "demo") async throws -> SCIMDirectory {
        let (_, token) = try await server.runtime.scim.tokens.create(realm: realm, name: "directory-\(UUID().uuidString.prefix(8))")
        return SCIMDirectory(client: client, token: token, realm: realm)
    }

    var base: String { "/scim/v2/realms/\(realm)" }

    func call(
        _ method: HTTPRequest.Method, _ path: String, json: JSONObject? = nil, body: String? = nil, headers extra: HTTPFields = [:]
    ) async throws -> AdminClient.Answer {
        var headers: HTTPFields = [.authorization: "Bearer " + token, .contentType: "application/scim+json"]
        for field in extra { headers[field.name] = field.value }
        let bytes = json.map { ByteBuffer(bytes: StrictJSON.serialize(.object($0))) } ?? body.map { ByteBuffer(string: $0) }
        return try await client.execute(uri: base + path, method: method, headers: headers, body: bytes) { response in
            AdminClient.Answer(status: response.status, headers: response.headers, json: (try? StrictJSON.parseObject(response.body.readableBytesView)) ?? [:])
        }
    }

    /// The ids of a filtered list, with its total.
    func find(_ filter: String, startIndex: Int? = nil, count: Int? = nil) async throws -> (total: Int?, userNames: [String]) {
        var query = "filter=" + filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        if let startIndex { query += "&startIndex=\(startIndex)" }
        if let count { query += "&count=\(count)" }
        let answer = try await call(.get, "/Users?" + query)
        XCTAssertEqual(answer.status, .ok, "\(filter): \(answer.json)")
        let names = answer.json["Resources"]?.arrayValue?.compactMap { $0.objectValue?["userName"]?.stringValue } ?? []
        return (answer.json["totalResults"]?.intValue.map(Int.init), names)
    }
}

final class SCIMUserAPITests: XCTestCase {
    static let core = "urn:ietf:params:scim:schemas:core:2.0:User"
    static let enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
    static let patchOp = "urn:ietf:params:scim:api:messages:2.0:PatchOp"

    /// A user as Microsoft Entra ID's default attribute mapping provisions one.
    static func entraUser(_ userName: String, externalId: String, email: String) -> JSONObject {
        [
            "schemas": .array([.string(core), .string(enterprise)]),
            "externalId": .string(externalId), "userName": .string(userName), "active": .bool(true), "displayName": .string("Barbara Jensen"),
            "title": .string("Engineer"), "preferredLanguage": .string("en-US"),
            "name": .object(["formatted": .string("Ms. Barbara J Jensen"), "familyName": .string("Jensen"), "givenName": .string("Barbara")]),
            "emails": .array([.object(["primary": .bool(true), "type": .string("work"), "value": .string(email)])]),
            "phoneNumbers": .array([.object(["type": .string("mobile"), "value": .string("+1 555 0100")])]),
            "addresses": .array([.object(["type": .string("work"), "locality": .string("Seattle"), "country": .string("US"), "primary": .bool(false)])]),
            enterprise: .object(["employeeNumber": .string("701984"), "department": .string("Tour Operations")]),
        ]
    }

    func testADirectoryProvisionsReadsAndFindsUsers() async throws {
        try await TestServer.forEachEngine { server, client in
            let directory = try await SCIMDirectory.make(server, client)
            let created = try await directory.call(.post, "/Users", json: Self.entraUser("bjensen@example.com", externalId: "e-1", email: "BJensen@Example.com"))
            XCTAssertEqual(created.status, .created, "\(created.json)")
            XCTAssertEqual(created.headers[.contentType], "application/scim+json")
            let id = try XCTUnwrap(created.json["id"]?.stringValue)
            XCTAssertEqual(created.headers[.location], TestServer.publicURL + directory.base + "/Users/" + id)
            XCTAssertEqual(created.headers[.eTag], "W/\"1\"")
            XCTAssertEqual(created.json["meta"]?.objectValue?["version"]?.stringValue, "W/\"1\"")
            XCTAssertEqual(created.json[Self.enterprise]?.objectValue?["employeeNumber"]?.stringValue, "701984")
            XCTAssertNil(created.json["password"])

            let read = try await directory.call(.get, "/Users/" + id)
            XCTAssertEqual(read.status, .ok)
            XCTAssertEqual(read.json, created.json, "what was created is what is read")
            let stored = try await server.runtime.accounts.users.user(realm: "demo", id: id)
            XCTAssertEqual(stored?.username, "bjensen@example.com")

            for index in 1...4 {
                let made = try await directory.call(.post, "/Users", json: Self.entraUser("user\(index)@example.org", externalId: "e-\(index + 1)", email: "user\(index)@example.org"))
                XCTAssertEqual(made.status, .created)
            }
            var found = try await directory.find("userName eq \"BJENSEN@example.com\"")
            XCTAssertEqual(found.userNames, ["bjensen@example.com"], "userName compares without regard to case")
            found = try await directory.find("externalId eq \"e-1\"")
            XCTAssertEqual(found.userNames, ["bjensen@example.com"])
            found = try await directory.find("externalId eq \"E-1\"")
            XCTAssertEqual(found.userNames, [], "externalId is case-exact")
            found = try await directory.find("emails.value eq \"bjensen@example.com\"")
            XCTAssertEqual(found.userNames, ["bjensen@example.com"])
            found = try await directory.find("emails[type eq \"work\" and value co \"example.org\"]")
            XCTAssertEqual(found.total, 4)
            found = try await directory.find("userName sw \"user\" and not (userName ew \"3@example.org\")")
            XCTAssertEqual(found.userNames.sorted(), ["user1@example.org", "user2@example.org", "user4@example.org"])
            found = try await directory.find("name.familyName eq \"jensen\" or displayName co \"nobody\"")
            XCTAssertEqual(found.total, 5)
            found = try await directory.find("displayName pr and active eq true")
            XCTAssertEqual(found.total, 5)

            // Paging: startIndex is 1-based, count bounds the page, totalResults counts them all.
            let first = try await directory.find("emails co \"example.org\"", startIndex: 1, count: 2)
            let second = try await directory.find("emails co \"example.org\"", startIndex: 3, count: 2)
            XCTAssertEqual(first.total, 4)
            XCTAssertEqual(second.total, 4)
            XCTAssertEqual((first.userNames + second.userNames).sorted(), (1...4).map { "user\($0)@example.org" }, "two pages, each user once")
            let none = try await directory.find("emails co \"example.org\"", startIndex: 9, count: 2)
            XCTAssertEqual(none.total, 4)
            XCTAssertEqual(none.userNames, [])
            let all = try await directory.call(.get, "/Users?count=0")
            XCTAssertEqual(all.json["totalResults"]?.intValue, 6, "the demo user and five made here")
            XCTAssertEqual(all.json["Resources"]?.arrayValue?.count, 0)
        }
    }

    func testFiltersOutsideWhatIsKeptAreInvalidFilterErrors() async throws {
        try await TestServer.forEachEngine { server, client in
            let directory = try await SCIMDirectory.make(server, client)
            for filter in ["nickName pr", "userName xx \"a\"", "userName eq", "active eq \"yes\"", "meta.created gt \"yesterday\"", "title eq 3",
                           "urn:example:ext:thing eq \"x\"", "emails[value eq \"a\"].value eq \"b\"", String(repeating: "(", count: 40) + "userName pr" + String(repeating: ")", count: 40)] {
                let answer = try await directory.call(.get, "/Users?filter=" + filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
                SCIMTokenTests.assertSCIMError(answer, .badRequest, filter)
                XCTAssertEqual(answer.json["scimType"]?.stringValue, "invalidFilter", filter)
            }
            let created = try await directory.call(.get, "/Users?filter=" + "meta.created gt \"2000-01-01T00:00:00Z\"".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
            XCTAssertEqual(created.json["totalResults"]?.intValue, 1)
            for bad in ["startIndex=x", "count=99999999999"] {
                let answer = try await directory.call(.get, "/Users?" + bad)
                SCIMTokenTests.assertSCIMError(answer, .badRequest, bad)
            }
        }
    }

    func testPutReplacesAndVersionsRefuseLostUpdates() async throws {
        try await TestServer.forEachEngine { server, client in
            let directory = try await SCIMDirectory.make(server, client)
            let created = try await directory.call(.post, "/Users", json: Self.entraUser("amy", externalId: "x-1", email: "amy@example.com"))
            let id = try XCTUnwrap(created.json["id"]?.stringValue)
            var replacement = Self.entraUser("amy.new", externalId: "x-1", email: "amy.new@example.com")
            replacement.removeValue(forKey: "title")
            replacement.removeValue(forKey: Self.enterprise)
            replacement["schemas"] = .array([.string(Self.core)])
            let put = try await directory.call(.put, "/Users/" + id, json: replacement, headers: [.ifMatch: "W/\"1\""])
            XCTAssertEqual(put.status, .ok, "\(put.json)")
            XCTAssertEqual(put.json["userName"]?.stringValue, "amy.new")
            XCTAssertNil(put.json["title"], "PUT replaces: what the body leaves out is gone")
            XCTAssertNil(put.json[Self.enterprise])
            XCTAssertEqual(put.headers[.eTag], "W/\"2\"")

            let stale = try await directory.call(.put, "/Users/" + id, json: replacement, headers: [.ifMatch: "W/\"1\""])
            SCIMTokenTests.assertSCIMError(stale, .preconditionFailed, "an old version")
            let strong = try await directory.call(.put, "/Users/" + id, json: replacement, headers: [.ifMatch: "\"2\""])
            XCTAssertEqual(strong.status, .ok, "versions compare weakly")
            let gone = try await directory.call(.put, "/Users/nope", json: replacement)
            SCIMTokenTests.assertSCIMError(gone, .notFound, "an unknown id")

            let other = try await directory.call(.post, "/Users", json: Self.entraUser("other", externalId: "x-2", email: "o@example.com"))
            XCTAssertEqual(other.status, .created)
            let taken = try await directory.call(.post, "/Users", json: Self.entraUser("OTHER", externalId: "x-3", email: "o2@example.com"))
            SCIMTokenTests.assertSCIMError(taken, .conflict, "a name taken in another case")
            XCTAssertEqual(taken.json["scimType"]?.stringValue, "uniqueness")
            let renamed = try await directory.call(.put, "/Users/" + id, json: Self.entraUser("Other", externalId: "x-1", email: "a@example.com"))
            XCTAssertEqual(renamed.json["scimType"]?.stringValue, "uniqueness")
        }
    }

    /// Entra ID and Okta send no `If-Match`: PATCHes of one user at once are each applied to the user as it is when
    /// written, so none is refused and none is lost; with `If-Match` naming an old version, one is still a 412.
    func testConcurrentPatchesWithoutIfMatchAllLand() async throws {
        try await TestServer.forEachEngine { server, client in
            let directory = try await SCIMDirectory.make(server, client)
            let created = try await directory.call(.post, "/Users", json: Self.entraUser("busy", externalId: "x-9", email: "busy@example.com"))
            let id = try XCTUnwrap(created.json["id"]?.stringValue)
            let phones = (0..<6).map { "+1 555 01\($0)\($0)" }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for phone in phones {
                    group.addTask {
                        let patch: JSONObject = [
                            "schemas": .array([.string(Self.patchOp)]),
                            "Operations": .array([.object(["op": .string("add"), "path": .string("phoneNumbers"), "value": .array([
                                .object(["type": .string("other"), "value": .string(phone)]),
                            ])])]),
                        ]
                        return try await directory.call(.patch, "/Users/" + id, json: patch).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(statuses, Array(repeating: .ok, count: phones.count))
            let read = try await directory.call(.get, "/Users/" + id)
            let numbers = Set(read.json["phoneNumbers"]?.arrayValue?.compactMap { $0.objectValue?["value"]?.stringValue } ?? [])
            XCTAssertEqual(numbers, Set(phones + ["+1 555 0100"]), "every PATCH's number is kept")
            XCTAssertEqual(read.headers[.eTag], "W/\"\(1 + phones.count)\"")

            let old: JSONObject = [
                "schemas": .array([.string(Self.patchOp)]),
                "Operations": .array([.object(["op": .string("replace"), "path": .string("title"), "value": .string("Lead")])]),
            ]
            let refused = try await directory.call(.patch, "/Users/" + id, json: old, headers: [.ifMatch: "W/\"1\""])
            SCIMTokenTests.assertSCIMError(refused, .preconditionFailed, "a PATCH naming an old version")
        }
    }

    func testEntraAndOktaPatchesAndDeactivationEndsSessions() async throws {
        try await TestServer.forEachEngine { server, client in
            let directory = try await SCIMDirectory.make(server, client)
            let users = server.runtime.accounts.users
            let existing = try await users.user(realm: "demo", username: "test")
            let test = try XCTUnwrap(existing)
            // Entra ID, as its documentation shows: capitalised ops, a work e-mail the user does not have yet, a bare manager id.
            let entra = try await directory.call(.patch, "/Users/" + test.id, json: [
                "schemas": .array([.string(Self.patchOp)]),
                "Operations": .array([
                    .object(["op": .string("Replace"), "path": .string("emails[type eq \"work\"].value"), "value": .string("test@contoso.com")]),
                    .object(["op": .string("Add"), "path": .string("name.givenName"), "value": .string("Tess")]),
                    .object(["op": .string("Add"), "path": .string("\(Self.enterprise):manager"), "value": .string("boss-id")]),
                    .object(["op": .string("Replace"), "path": .string("displayName"), "value": .string("Tess T")]),
                ]),
            ])
            XCTAssertEqual(entra.status, .ok, "\(entra.json)")
            XCTAssertEqual(entra.json["emails"], .array([.object(["type": .string("work"), "value": .string("test@contoso.com"), "primary": .bool(false)])]))
            XCTAssertEqual(entra.json["name"]?.objectValue?["givenName"]?.stringValue, "Tess")
            XCTAssertEqual(entra.json[Self.enterprise]?.objectValue?["manager"]?.objectValue?["value"]?.stringValue, "boss-id")
            XCTAssertTrue(entra.json["schemas"]?.arrayValue?.contains(.string(Self.enterprise)) == true)
            let found = try await directory.find("emails[type eq \"work\" and value eq \"TEST@contoso.com\"]")
            XCTAssertEqual(found.userNames, ["test"])

            let replaced = try await directory.call(.patch, "/Users/" + test.id, json: [
                "schemas": .array([.string(Self.patchOp)]),
                "Operations": .array([
                    .object(["op": .string("replace"), "path": .string("emails[type eq \"work\"].value"), "value": .string("tess@contoso.com")]),
                    .object(["op": .string("remove"), "path": .string("name.givenName")]),
                ]),
            ])
            XCTAssertEqual(replaced.json["emails"]?.arrayValue?.count, 1, "the matching e-mail was replaced, not another added")
            XCTAssertNil(replaced.json["name"]?.objectValue?["givenName"])

            // Entra ID deactivates with the string "False"; every session ends.
            _ = try await TestBrowser(client).signIn()
            let before = try await server.runtime.accounts.browserSessions.sessions(realm: "demo", userId: test.id)
            XCTAssertEqual(before.count, 1)
            let deactivated = try await directory.call(.patch, "/Users/" + test.id, json: [
                "schemas": .array([.string(Self.patchOp)]),
                "Operations": .array([.object(["op": .string("Replace"), "path": .string("active"), "value": .string("False")])]),
            ])
            XCTAssertEqual(deactivated.status, .ok, "\(deactivated.json)")
            XCTAssertEqual(deactivated.json["active"], .bool(false))
            let after = try await server.runtime.accounts.browserSessions.sessions(realm: "demo", userId: test.id)
            XCTAssertEqual(after.count, 0)
            let events = try await server.runtime.audit.events(realm: "demo", limit: 50)
            let disabling = try XCTUnwrap(events.first { $0.type == .userDisabled && $0.userId == test.id })
            XCTAssertTrue(disabling.detailsJSON.contains("\"via\":\"scim\""), disabling.detailsJSON)

            // Okta: a no-path replace with a value object.
            let okta = try await directory.call(.patch, "/Users/" + test.id, json: [
                "schemas": .array([.string(Self.patchOp)]),
                "Operations": .array([.object(["op": .string("replace"), "value": .object(["active": .bool(true), "displayName": .string("Tess")])])]),
            ])
            XCTAssertEqual(okta.json["active"], .bool(true))
            XCTAssertEqual(okta.json["displayName"]?.stringValue, "Tess")
            let enabled = try await users.user(realm: "demo", id: test.id)
            XCTAssertEqual(enabled?.enabled, true)

            let stale = try await directory.call(.patch, "/Users/" + test.id, json: [
                "schemas": .array([.string(Self.patchOp)]),
                "Operations": .array([.object(["op": .string("replace"), "path": .string("title"), "value": .string("x")])]),
            ], headers: [.ifMatch: "W/\"1\""])
            SCIMTokenTests.assertSCIMError(stale, .preconditionFailed, "a PATCH at an old version")

            let deleted = try await directory.call(.delete, "/Users/" + test.id)
            XCTAssertEqual(deleted.status, .noContent)
            let missing = try await directory.call(.get, "/Users/" + test.id)
            SCIMTokenTests.assertSCIMError(missing, .notFound, "a deleted user")
            let gone = try await users.user(realm: "demo", id: test.id)
            XCTAssertNil(gone)
        }
    }

    func testHostileBodiesAreSCIMErrorsAndWriteNothing() async throws {
        try await TestServer.forEachEngine { server, client in
            let directory = try await SCIMDirectory.make(server, client)
            let existing = try await server.runtime.accounts.users.user(realm: "demo", username: "test")
            let test = try XCTUnwrap(existing)
            var base = Self.entraUser("hostile", externalId: "h", email: "h@example.com")
            let cases: [(String, JSONObject, HTTPResponse.Status, String)] = [
                ("an unknown attribute", base.merging(["roles": .array([])]) { $1 }, .badRequest, "invalidSyntax"),
                ("an unknown sub-attribute", base.merging(["name": .object(["nickname": .string("x")])]) { $1 }, .badRequest, "invalidSyntax"),
                ("a name given twice", base.merging(["USERNAME": .string("x")]) { $1 }, .badRequest, "invalidSyntax"),
                ("no schemas", base.filter { $0.key != "schemas" }, .badRequest, "invalidSyntax"),
                ("an unknown schema", base.merging(["schemas": .array([.string(Self.core), .string("urn:example:x")])]) { $1 }, .badRequest, "invalidValue"),
                ("no userName", base.filter { $0.key != "userName" }, .badRequest, "invalidValue"),
                ("active as a string", base.merging(["active": .string("yes")]) { $1 }, .badRequest, "invalidValue"),
                ("two primary e-mails", base.merging(["emails": .array([
                    .object(["value": .string("a@x"), "primary": .bool(true)]), .object(["value": .string("b@x"), "primary": .bool(true)]),
                ])]) { $1 }, .badRequest, "invalidValue"),
                ("a long title", base.merging(["title": .string(String(repeating: "t", count: 3000))]) { $1 }, .badRequest, "invalidValue"),
                ("too many e-mails", base.merging(["emails": .array((0..<21).map { .object(["value": .string("\($0)@x")]) })]) { $1 }, .badRequest, "invalidValue"),
            ]
            for (what, body, status, scimType) in cases {
                let answer = try await directory.call(.post, "/Users", json: body)
                SCIMTokenTests.assertSCIMError(answer, status, what)
                XCTAssertEqual(answer.json["scimType"]?.stringValue, scimType, what)
            }
            base["userName"] = .string("hostile")
            let patches: [(String, JSONValue, String)] = [
                ("the id", .object(["op": .string("replace"), "path": .string("id"), "value": .string("x")]), "mutability"),
                ("a bad path", .object(["op": .string("replace"), "path": .string("emails[type eq]"), "value": .string("x")]), "invalidPath"),
                ("an unknown op", .object(["op": .string("move"), "path": .string("title"), "value": .string("x")]), "invalidSyntax"),
                ("a remove without a path", .object(["op": .string("remove")]), "noTarget"),
                ("a value filter matching nothing, not an equality", .object(["op": .string("replace"), "path": .string("emails[value co \"zz\"].type"), "value": .string("x")]), "noTarget"),
                ("an unknown attribute", .object(["op": .string("add"), "path": .string("roles"), "value": .string("x")]), "invalidSyntax"),
            ]
            for (what, operation, scimType) in patches {
                let answer = try await directory.call(.patch, "/Users/" + test.id, json: [
                    "schemas": .array([.string(Self.patchOp)]), "Operations": .array([operation]),
                ])
                SCIMTokenTests.assertSCIMError(answer, .badRequest, what)
                XCTAssertEqual(answer.json["scimType"]?.stringValue, scimType, what)
            }
            let many = try await directory.call(.patch, "/Users/" + test.id, json: [
                "schemas": .array([.string(Self.patchOp)]),
                "Operations": .array(Array(repeating: .object(["op": .string("replace"), "path": .string("title"), "value": .string("x")]), count: 101)),
            ])
            SCIMTokenTests.assertSCIMError(many, .badRequest, "too many operations")
            let malformed = try await directory.call(.post, "/Users", body: "{\"schemas\": [")
            SCIMTokenTests.assertSCIMError(malformed, .badRequest, "malformed JSON")
            let plain = try await directory.call(.post, "/Users", body: "{}", headers: [.contentType: "text/plain"])
            SCIMTokenTests.assertSCIMError(plain, .unsupportedMediaType, "text/plain")
            let huge = try await directory.call(.post, "/Users", body: "{\"x\":\"" + String(repeating: "a", count: 2_000_000) + "\"}")
            SCIMTokenTests.assertSCIMError(huge, .contentTooLarge, "a body over http.maxBodySize")
            let still = try await server.runtime.accounts.users.user(realm: "demo", id: test.id)
            XCTAssertEqual(still?.revision, test.revision, "nothing was written")
            let hostile = try await server.runtime.accounts.users.user(realm: "demo", username: "hostile")
            XCTAssertNil(hostile)
        }
    }

    func testSearchBodiesProjectionsAndUnknownPaths() async throws {
        try await TestServer.forEachEngine { server, client in
            let directory = try await SCIMDirectory.make(server, client)
            _ = try await directory.call(.post, "/Users", json: Self.entraUser("kim@example.com", externalId: "k-1", email: "kim@example.com"))
            let search: JSONObject = [
                "schemas": .array([.string("urn:ietf:params:scim:api:messages:2.0:SearchRequest")]),
                "filter": .string("userName eq \"KIM@example.com\""), "attributes": .array([.string("userName"), .string("name.givenName")]),
            ]
            for path in ["/Users/.search", "/.search"] {
                let found = try await directory.call(.post, path, json: search)
                XCTAssertEqual(found.status, .ok, "\(path): \(found.json)")
                let user = try XCTUnwrap(found.json["Resources"]?.arrayValue?.first?.objectValue)
                XCTAssertEqual(Set(user.keys), ["id", "schemas", "userName", "name"], path)
                XCTAssertEqual(user["name"], .object(["givenName": .string("Barbara")]))
            }
            let sorted = try await directory.call(.post, "/.search", json: search.merging(["sortBy": .string("userName")]) { $1 })
            XCTAssertEqual(sorted.json["scimType"]?.stringValue, "invalidValue", "sorting is not offered")

            // `+` is a space in a query, as form-encoding clients write it; excludedAttributes leaves out what it names.
            let plus = try await directory.call(.get, "/Users?filter=userName+eq+%22kim%40example.com%22&excludedAttributes=emails,\(Self.enterprise):department")
            XCTAssertEqual(plus.json["totalResults"]?.intValue, 1, "\(plus.json)")
            let user = try XCTUnwrap(plus.json["Resources"]?.arrayValue?.first?.objectValue)
            XCTAssertNil(user["emails"])
            XCTAssertEqual(user[Self.enterprise], .object(["employeeNumber": .string("701984")]))
            XCTAssertNotNil(user["userName"])
            let twice = try await directory.call(.get, "/Users?count=1&count=2")
            SCIMTokenTests.assertSCIMError(twice, .badRequest, "a parameter twice")

            let nowhere = try await directory.call(.get, "/Roles")
            SCIMTokenTests.assertSCIMError(nowhere, .notFound, "an endpoint that is not served")
            let wrongMethod = try await directory.call(.delete, "/Schemas")
            XCTAssertEqual(wrongMethod.status, .methodNotAllowed)
        }
    }

    func testSchemasAndResourceTypesDescribeWhatIsKept() async throws {
        try await TestServer.forEachEngine { server, client in
            let directory = try await SCIMDirectory.make(server, client)
            let schemas = try await directory.call(.get, "/Schemas")
            XCTAssertEqual(schemas.status, .ok)
            let ids = schemas.json["Resources"]?.arrayValue?.compactMap { $0.objectValue?["id"]?.stringValue }
            XCTAssertEqual(ids, [Self.core, Self.enterprise, "urn:ietf:params:scim:schemas:core:2.0:Group"])
            let user = try await directory.call(.get, "/Schemas/" + Self.core)
            let names = user.json["attributes"]?.arrayValue?.compactMap { $0.objectValue?["name"]?.stringValue } ?? []
            XCTAssertTrue(["userName", "name", "displayName", "active", "emails", "password"].allSatisfy(names.contains), "\(names)")
            let types = try await directory.call(.get, "/ResourceTypes/User")
            XCTAssertEqual(types.json["endpoint"]?.stringValue, "/Users")
            let unknown = try await directory.call(.get, "/Schemas/urn:example")
            SCIMTokenTests.assertSCIMError(unknown, .notFound, "an unknown schema")
        }
    }
}
