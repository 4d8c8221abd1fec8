// Tests: who may call the SCIM API — a realm's directory tokens (hashed, revocable, kept to their realm) and admin
// clients' DPoP-bound tokens with the users scopes; every refusal in SCIM's error shape.
import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class SCIMTokenTests: XCTestCase {
    static let configPath = "/scim/v2/realms/demo/ServiceProviderConfig"

    func testADirectoryTokenOpensItsRealmOnlyUntilItIsRevoked() async throws {
        try await TestServer.forEachEngine { server, client in
            _ = try await server.runtime.oauth.realms.createRealm(name: "other")
            let (token, secret) = try await server.runtime.scim.tokens.create(realm: "demo", name: "entra")
            XCTAssertTrue(secret.hasPrefix("kwscim_" + token.id + "."))

            let config = try await Self.get(client, Self.configPath, bearer: secret)
            XCTAssertEqual(config.status, .ok, "\(config.json)")
            XCTAssertEqual(config.headers[.contentType], "application/scim+json")
            XCTAssertEqual(config.json["schemas"], .array([.string("urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig")]))
            XCTAssertEqual(config.json["patch"], .object(["supported": .bool(true)]))
            XCTAssertEqual(config.json["meta"]?.objectValue?["location"]?.stringValue, TestServer.publicURL + Self.configPath)

            // Only the token's SHA-256 is stored.
            let stored = try await server.runtime.database.sql.raw("SELECT token_hash FROM scim_tokens").all()
                .map { try $0.decode(column: "token_hash", as: String.self) }
            XCTAssertEqual(stored, [Base64URL.encode(SHA256.hash(data: Array(secret.utf8)))])
            XCTAssertFalse(stored.contains(secret))

            // Another realm's token, a changed secret, another scheme's spelling and none at all are refused alike.
            let (_, otherSecret) = try await server.runtime.scim.tokens.create(realm: "other", name: "entra")
            let forged = String(secret.dropLast(2)) + (secret.hasSuffix("AA") ? "BB" : "AA")
            for presented in [otherSecret, forged, "kwscim_", "kwscim_.", "kwscim_" + token.id, String(repeating: "k", count: 5000)] {
                let refused = try await Self.get(client, Self.configPath, bearer: presented)
                Self.assertSCIMError(refused, .unauthorized, presented)
                XCTAssertEqual(refused.headers[.wwwAuthenticate], "Bearer realm=\"scim/demo\", error=\"invalid_token\"")
            }
            let anonymous = try await Self.get(client, Self.configPath, authorization: nil)
            Self.assertSCIMError(anonymous, .unauthorized, "no Authorization")
            XCTAssertEqual(anonymous.headers[.wwwAuthenticate], "Bearer realm=\"scim/demo\"")
            let twice = try await Self.get(client, Self.configPath, authorization: ["Bearer " + secret, "Bearer " + secret])
            XCTAssertEqual(twice.status, .unauthorized)
            let lowercase = try await Self.get(client, Self.configPath, authorization: ["bearer " + secret])
            XCTAssertEqual(lowercase.status, .ok, "the scheme is case-insensitive")
            let otherPath = try await Self.get(client, "/scim/v2/realms/other/ServiceProviderConfig", bearer: secret)
            Self.assertSCIMError(otherPath, .unauthorized, "demo's token on other's path")
            let unknownRealm = try await Self.get(client, "/scim/v2/realms/nope/ServiceProviderConfig", bearer: secret)
            Self.assertSCIMError(unknownRealm, .notFound, "an unknown realm")

            // Revoked by name, refused at the next request; revoking twice says there is nothing to revoke.
            try await server.runtime.scim.tokens.revoke(realm: "demo", idOrName: "entra")
            let revoked = try await Self.get(client, Self.configPath, bearer: secret)
            Self.assertSCIMError(revoked, .unauthorized, "revoked")
            do {
                try await server.runtime.scim.tokens.revoke(realm: "demo", idOrName: token.id)
                XCTFail("revoked twice")
            } catch let failure as SCIMTokenService.Failure {
                XCTAssertEqual(failure, .notFound("realm 'demo' has no SCIM token with id or name '\(token.id)'"))
            }
            let events = try await server.runtime.audit.events(realm: "demo", limit: 20).map(\.type)
            XCTAssertTrue(events.contains(.scimTokenCreated) && events.contains(.scimTokenRevoked), "\(events)")
        }
    }

    func testTokenNamesAreCheckedAndUniquePerRealm() async throws {
        try await TestServer.forEachEngine { server, _ in
            _ = try await server.runtime.scim.tokens.create(realm: "demo", name: "okta")
            do {
                _ = try await server.runtime.scim.tokens.create(realm: "demo", name: "okta")
                XCTFail("a second token of the same name")
            } catch StoreError.conflict(let message) {
                XCTAssertEqual(message, "realm 'demo' has a SCIM token named 'okta' already")
            }
            for bad in ["", String(repeating: "n", count: 101), "tab\there"] {
                do {
                    _ = try await server.runtime.scim.tokens.create(realm: "demo", name: bad)
                    XCTFail("name \(bad.debugDescription) accepted")
                } catch is SCIMTokenService.Failure {}
            }
            do {
                _ = try await server.runtime.scim.tokens.create(realm: "missing", name: "okta")
                XCTFail("a token for a realm that does not exist")
            } catch StoreError.notFound {}
            let names = try await server.runtime.scim.tokens.tokens(realm: "demo").map(\.name)
            XCTAssertEqual(names, ["okta"])
        }
    }

    func testAnAdminClientNeedsTheUsersScopes() async throws {
        try await TestServer.forEachEngine { server, client in
            let reader = try await AdminClient.make(server, client, clientId: "reader", scopes: [.usersRead])
            let read = try await reader.call(.get, Self.configPath)
            XCTAssertEqual(read.status, .ok, "\(read.json)")
            let stranger = try await AdminClient.make(server, client, clientId: "keys", scopes: [.keysRead])
            let refused = try await stranger.call(.get, Self.configPath)
            Self.assertSCIMError(refused, .forbidden, "no users scope")
            XCTAssertTrue(refused.headers[.wwwAuthenticate]?.contains("admin:users:read") == true)
            // A DPoP token sent as a bearer token is not a SCIM token.
            let asBearer = try await Self.get(client, Self.configPath, bearer: reader.token)
            XCTAssertEqual(asBearer.status, .unauthorized)
        }
    }

    static func get(_ client: any TestClientProtocol, _ path: String, bearer: String) async throws -> AdminClient.Answer {
        try await get(client, path, authorization: ["Bearer " + bearer])
    }

    static func get(_ client: any TestClientProtocol, _ path: String, authorization: [String]?) async throws -> AdminClient.Answer {
        var headers: HTTPFields = [:]
        for value in authorization ?? [] { headers.append(HTTPField(name: .authorization, value: value)) }
        return try await client.execute(uri: path, method: .get, headers: headers) { response in
            AdminClient.Answer(status: response.status, headers: response.headers, json: (try? StrictJSON.parseObject(response.body.readableBytesView)) ?? [:])
        }
    }

    static func assertSCIMError(_ answer: AdminClient.Answer, _ status: HTTPResponse.Status, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(answer.status, status, what, file: file, line: line)
        XCTAssertEqual(answer.headers[.contentType], "application/scim+json", what, file: file, line: line)
        XCTAssertEqual(answer.json["schemas"], .array([.string("urn:ietf:params:scim:api:messages:2.0:Error")]), what, file: file, line: line)
        XCTAssertEqual(answer.json["status"], .string(String(status.code)), what, file: file, line: line)
        XCTAssertNotNil(answer.json["detail"]?.stringValue, what, file: file, line: line)
    }
}
