// Tests: who may call the admin API — scopes per client, realms per client, the master realm, refused tokens.
import Foundation
import HTTPTypes
import KeywardJOSE
import KeywardServer
import XCTest

final class AdminAuthorizationTests: XCTestCase {
    func testScopesAreEnforcedPerRoute() async throws {
        try await TestServer.forEachEngine { server, client in
            let reader = try await AdminClient.make(server, client, clientId: "reader", scopes: [.usersRead])
            let listed = try await reader.call(.get, "/admin/realms/demo/users")
            XCTAssertEqual(listed.status, .ok, "\(listed.json)")
            let write = try await reader.call(.post, "/admin/realms/demo/users", json: ["username": .string("nope")])
            XCTAssertEqual(write.status, .forbidden)
            XCTAssertEqual(write.code, "insufficient_scope")
            XCTAssertTrue(write.headers[.wwwAuthenticate]?.contains("admin:users:write") == true)
            let written = try await server.runtime.accounts.users.user(realm: "demo", username: "nope")
            XCTAssertNil(written, "nothing was written")
            let clients = try await reader.call(.get, "/admin/realms/demo/clients")
            XCTAssertEqual(clients.status, .forbidden)

            // A token asked for with fewer scopes than the client holds carries only those.
            let narrow = try await AdminClient.make(server, client, clientId: "narrow", scopes: [.usersRead, .usersWrite], requestedScope: "admin:users:read")
            let narrowWrite = try await narrow.call(.post, "/admin/realms/demo/users", json: ["username": .string("nope")])
            XCTAssertEqual(narrowWrite.status, .forbidden)

            // A client with no admin scope, and its ordinary token, gets nothing.
            let plain = try await AdminClient.make(server, client, clientId: "plain", scopes: [])
            let refused = try await plain.call(.get, "/admin/realms/demo/users")
            XCTAssertEqual(refused.status, .forbidden)
            XCTAssertEqual(refused.code, "not_an_admin_client")
        }
    }

    func testRealmsAreKeptApartButTheMasterRealmManagesAll() async throws {
        try await TestServer.forEachEngine { server, client in
            let other = try await AdminClient.make(server, client, realm: "other", clientId: "other-ops", scopes: [.usersRead, .usersWrite])
            let crossing = try await other.call(.get, "/admin/realms/demo/users")
            XCTAssertEqual(crossing.status, .unauthorized, "a token of realm other is not verified against demo's keys: \(crossing.json)")
            XCTAssertEqual(crossing.code, "invalid_token")
            let own = try await other.call(.get, "/admin/realms/other/users")
            XCTAssertEqual(own.status, .ok)
            let realms = try await other.call(.get, "/admin/realms")
            XCTAssertEqual(realms.status, .forbidden)
            XCTAssertEqual(realms.code, "realm_forbidden")

            let master = try await AdminClient.make(server, client, realm: "master", clientId: "root", scopes: [.usersRead, .usersWrite, .realmsRead, .realmsWrite])
            let managed = try await master.call(.post, "/admin/realms/demo/users", json: ["username": .string("from-master")])
            XCTAssertEqual(managed.status, .created, "\(managed.json)")
            let made = try await master.call(.post, "/admin/realms", json: ["name": .string("third"), "access_token_lifetime": .number(600)])
            XCTAssertEqual(made.status, .created, "\(made.json)")
            XCTAssertEqual(made.json["issuer"]?.stringValue, TestServer.publicURL + "/realms/third")
            let names = try await master.call(.get, "/admin/realms")
            XCTAssertEqual(names.json["items"]?.arrayValue?.compactMap { $0.objectValue?["name"]?.stringValue }, ["demo", "master", "other", "third"])

            let events = try await server.runtime.audit.events(realm: "demo", limit: 20)
            let created = try XCTUnwrap(events.first { $0.type == .userCreated && $0.detailsJSON.contains("from-master") })
            XCTAssertEqual(created.clientId, "root")
            XCTAssertTrue(created.detailsJSON.contains("\"clientRealm\":\"master\""), created.detailsJSON)
        }
    }

    func testRefusedTokensAndProofs() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.usersRead])
            // No credentials: a bare DPoP challenge.
            let bare = try await client.execute(uri: "/admin/realms/demo/users", method: .get) { ($0.status, $0.headers) }
            XCTAssertEqual(bare.0, .unauthorized)
            XCTAssertTrue(bare.1[.wwwAuthenticate]?.hasPrefix("DPoP") == true)
            XCTAssertEqual(bare.1[.contentType], "application/problem+json")

            // A replayed proof.
            let proof = try DPoPProof.make(
                key: admin.key, method: "GET", url: TestServer.publicURL + "/admin/realms/demo/users", issuedAt: server.clock.now(), accessToken: admin.token
            )
            let first = try await admin.call(.get, "/admin/realms/demo/users", proof: proof)
            XCTAssertEqual(first.status, .ok)
            let replayed = try await admin.call(.get, "/admin/realms/demo/users", proof: proof)
            XCTAssertEqual(replayed.status, .unauthorized)
            XCTAssertEqual(replayed.code, "invalid_dpop_proof")

            // A proof for another path, and a proof by another key.
            let elsewhere = try await admin.call(.get, "/admin/realms/demo/users", proof: try DPoPProof.make(
                key: admin.key, method: "GET", url: TestServer.publicURL + "/admin/realms/demo/clients", issuedAt: server.clock.now(), accessToken: admin.token
            ))
            XCTAssertEqual(elsewhere.status, .unauthorized)
            let thief = try SigningKey.generate(.es256)
            let stolen = try await admin.call(.get, "/admin/realms/demo/users", proof: try DPoPProof.make(
                key: thief, method: "GET", url: TestServer.publicURL + "/admin/realms/demo/users", issuedAt: server.clock.now(), accessToken: admin.token
            ))
            XCTAssertEqual(stolen.status, .unauthorized)

            // A deleted client's token stops working at once, not when it expires.
            try await server.runtime.oauth.clients.deleteClient(realm: "demo", clientId: "ops")
            let deleted = try await admin.call(.get, "/admin/realms/demo/users")
            XCTAssertEqual(deleted.status, .unauthorized)
            XCTAssertEqual(deleted.code, "invalid_token")

            // Another client's own token, which holds no admin scope, gets nothing.
            let demoToken = try await client.demoToken(server, key: admin.key)
            let person = try await admin.call(.get, "/admin/realms/demo/users", token: demoToken)
            XCTAssertEqual(person.status, .forbidden)
        }
    }

    func testAClientCannotGrantMoreThanItHolds() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.clientsRead, .clientsWrite, .usersRead])
            let escalation = try await admin.call(.post, "/admin/realms/demo/clients", json: [
                "client_id": .string("stronger"), "admin_scopes": .array([.string("users:write")]),
            ])
            XCTAssertEqual(escalation.status, .forbidden, "\(escalation.json)")
            XCTAssertEqual(escalation.code, "insufficient_scope")
            let allowed = try await admin.call(.post, "/admin/realms/demo/clients", json: [
                "client_id": .string("reader"), "admin_scopes": .array([.string("users:read")]), "scope": .string("profile"),
            ])
            XCTAssertEqual(allowed.status, .created, "\(allowed.json)")
            let secret = try XCTUnwrap(allowed.json["client_secret"]?.stringValue)
            let token = try await AdminClient.token(server, client, realm: "demo", clientId: "reader", secret: secret, key: admin.key)
            let read = try await admin.call(.get, "/admin/realms/demo/users", token: token)
            XCTAssertEqual(read.status, .ok)
            let shown = try await admin.call(.get, "/admin/realms/demo/clients/reader")
            XCTAssertNil(shown.json["client_secret"], "the secret is shown once")
            XCTAssertEqual(shown.json["admin_scopes"], .array([.string("users:read")]))

            let reserved = try await admin.call(.post, "/admin/realms/demo/clients", json: ["client_id": .string("sneaky"), "scope": .string("admin:users:write")])
            XCTAssertEqual(reserved.status, .badRequest)
            XCTAssertEqual(reserved.json["field"]?.stringValue, "scope")
            let publicAdmin = try await admin.call(.post, "/admin/realms/demo/clients", json: [
                "client_id": .string("app"), "type": .string("public"), "admin_scopes": .array([.string("users:read")]),
            ])
            XCTAssertEqual(publicAdmin.status, .badRequest)
            let deleted = try await admin.call(.delete, "/admin/realms/demo/clients/reader")
            XCTAssertEqual(deleted.status, .noContent)
            let missing = try await admin.call(.delete, "/admin/realms/demo/clients/reader")
            XCTAssertEqual(missing.status, .notFound)
        }
    }

    func testHostileBodiesGetProblemsNeverServerErrors() async throws {
        try await TestServer.forEachEngine(configure: { $0.maxBodySize = 4096 }) { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.usersRead, .usersWrite, .clientsWrite])
            let cases: [(String, String?, JSONObject?, HTTPFields, HTTPResponse.Status)] = [
                ("unknown member", nil, ["username": .string("x1"), "role": .string("admin")], [:], .badRequest),
                ("wrong type", nil, ["username": .number(1)], [:], .badRequest),
                ("missing username", nil, [:], [:], .badRequest),
                ("malformed JSON", "{\"username\":", nil, [.contentType: "application/json"], .badRequest),
                ("duplicate member", "{\"username\":\"a\",\"username\":\"b\"}", nil, [.contentType: "application/json"], .badRequest),
                ("NUL in a string", "{\"username\":\"a\\u0000b\"}", nil, [.contentType: "application/json"], .badRequest),
                ("form body", "username=x", nil, [.contentType: "application/x-www-form-urlencoded"], .unsupportedMediaType),
                ("oversized", "{\"username\":\"" + String(repeating: "a", count: 8000) + "\"}", nil, [.contentType: "application/json"], .contentTooLarge),
                ("deep JSON", String(repeating: "[", count: 3000), nil, [.contentType: "application/json"], .badRequest),
                ("username with a space", nil, ["username": .string("a b")], [:], .badRequest),
            ]
            for (label, raw, json, headers, status) in cases {
                let answer = try await admin.call(.post, "/admin/realms/demo/users", json: json, body: raw, headers: headers)
                XCTAssertEqual(answer.status, status, "\(label): \(answer.json)")
                XCTAssertEqual(answer.headers[.contentType], "application/problem+json", label)
                XCTAssertNotNil(answer.code, label)
                XCTAssertNotNil(answer.json["request_id"], label)
            }
            let unknownRealm = try await admin.call(.get, "/admin/realms/nowhere/users")
            XCTAssertEqual(unknownRealm.status, .notFound)
            XCTAssertEqual(unknownRealm.code, "realm_not_found")
            let longId = try await admin.call(.get, "/admin/realms/demo/users/" + String(repeating: "x", count: 300))
            XCTAssertEqual(longId.status, .notFound)
        }
    }
}
