// Tests: the security review of issue 33's findings on the admin API, each failing before its fix.
import Foundation
import HTTPTypes
import KeywardJOSE
import KeywardServer
import XCTest

final class AdminReviewFindingsTests: XCTestCase {
    /// Medium: whoever controls an issuer's keys or a provider's endpoints signs in as the users linked to it, so
    /// `issuers:write` or `providers:write` alone may not change them.
    func testChangingWhatAnIssuerOrProviderTrustsTakesUsersWrite() async throws {
        try await TestServer.forEachEngine { server, client in
            let full = try await AdminClient.make(server, client, clientId: "full", scopes: [.issuersRead, .issuersWrite, .usersWrite, .providersWrite])
            let added = try await full.call(.post, "/admin/realms/demo/issuers", json: [
                "issuer": .string("https://host.example"), "jwks_url": .string("https://host.example/jwks.json"),
            ])
            XCTAssertEqual(added.status, .created, "\(added.json)")
            let id = try XCTUnwrap(added.json["id"]?.stringValue)
            let narrow = try await AdminClient.make(server, client, clientId: "narrow", scopes: [.issuersRead, .issuersWrite, .providersWrite])
            let rekeyed = try await narrow.call(.patch, "/admin/realms/demo/issuers/\(id)", json: ["jwks_url": .string("https://attacker.example/jwks.json")])
            XCTAssertEqual(rekeyed.status, .forbidden, "\(rekeyed.json)")
            XCTAssertEqual(rekeyed.code, "insufficient_scope")
            let stored = try await server.runtime.hostTokens.issuers.list(realm: "demo").first
            XCTAssertEqual(stored.map { "\($0.keySource)" }, "jwksURL(\"https://host.example/jwks.json\")", "nothing was changed")
            let provider = try await narrow.call(.post, "/admin/realms/demo/providers", json: [
                "alias": .string("corp"), "type": .string("oidc"), "issuer": .string("https://login.corp.example"), "client_id": .string("x"),
            ])
            XCTAssertEqual(provider.status, .forbidden)
            let allowed = try await full.call(.patch, "/admin/realms/demo/issuers/\(id)", json: ["leeway": .number(5)])
            XCTAssertEqual(allowed.status, .ok)
        }
    }

    /// Low: a client deleted and made again under the same id is another client; the old one's tokens stay dead.
    func testTokensOfADeletedClientDoNotComeBackWithItsId() async throws {
        try await TestServer.forEachEngine { server, client in
            let old = try await AdminClient.make(server, client, clientId: "ci-bot", scopes: [.usersRead])
            try await server.runtime.oauth.clients.deleteClient(realm: "demo", clientId: "ci-bot")
            server.clock.advance(by: 10)
            _ = try await server.runtime.oauth.clients.createClient(realm: "demo", clientId: "ci-bot", adminScopes: [.usersRead])
            let revived = try await old.call(.get, "/admin/realms/demo/users")
            XCTAssertEqual(revived.status, .unauthorized, "\(revived.json)")
            XCTAssertEqual(revived.code, "invalid_token")
        }
    }

    /// Medium: a write to a resource with no ETag refuses an If-Match tag instead of writing unconditionally; low: a tag
    /// is compared as written ("03" is not "3").
    func testIfMatchIsNeverIgnored() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.realmsRead, .realmsWrite, .usersRead, .usersWrite])
            let tagged = try await admin.call(.patch, "/admin/realms/demo/settings/push-mfa", json: ["maxDevicesPerUser": .number(4)], headers: [.ifMatch: "\"7\""])
            XCTAssertEqual(tagged.status, .preconditionFailed, "\(tagged.json)")
            let before = try await server.runtime.pushMFA.service.settings(realm: "demo")
            XCTAssertNotEqual(before.maxDevicesPerUser, 4, "nothing was written")
            let any = try await admin.call(.patch, "/admin/realms/demo/settings/push-mfa", json: ["maxDevicesPerUser": .number(4)], headers: [.ifMatch: "*"])
            XCTAssertEqual(any.status, .ok)

            let made = try await admin.call(.post, "/admin/realms/demo/users", json: ["username": .string("zero")])
            let id = try XCTUnwrap(made.json["id"]?.stringValue)
            let padded = try await admin.call(.patch, "/admin/realms/demo/users/\(id)", json: ["enabled": .bool(false)], headers: [.ifMatch: "\"01\""])
            XCTAssertEqual(padded.status, .preconditionFailed)
            let exact = try await admin.call(.patch, "/admin/realms/demo/users/\(id)", json: ["enabled": .bool(false)], headers: [.ifMatch: "\"1\""])
            XCTAssertEqual(exact.status, .ok)
        }
    }

    /// Low: a user created disabled is never enabled, not even between two statements; an empty change is refused.
    func testAUserCreatedDisabledIsOneWriteAndAnEmptyChangeIsRefused() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.usersRead, .usersWrite])
            let made = try await admin.call(.post, "/admin/realms/demo/users", json: ["username": .string("dormant"), "enabled": .bool(false)])
            XCTAssertEqual(made.status, .created)
            XCTAssertEqual(made.json["enabled"], .bool(false))
            XCTAssertEqual(made.etag, "\"1\"", "one insert, no second write")
            let id = try XCTUnwrap(made.json["id"]?.stringValue)
            let empty = try await admin.call(.patch, "/admin/realms/demo/users/\(id)", json: [:])
            XCTAssertEqual(empty.status, .badRequest)
            let user = try await server.runtime.accounts.users.user(realm: "demo", id: id)
            XCTAssertEqual(user?.revision, 1)
        }
    }
}

final class AdminRefusalAuditTests: XCTestCase {
    /// Refused admin calls are audited (review of issue 33, left from its first slice): the rule and the client when it
    /// was known, at most one row per realm and reason a minute.
    func testRefusalsAreAuditedOncePerReasonAMinute() async throws {
        try await TestServer.forEachEngine { server, client in
            let reader = try await AdminClient.make(server, client, clientId: "reader", scopes: [.usersRead])
            for _ in 0..<3 {
                let refused = try await reader.call(.post, "/admin/realms/demo/users", json: ["username": .string("nope")])
                XCTAssertEqual(refused.status, .forbidden)
            }
            for _ in 0..<3 {
                let bare = try await client.execute(uri: "/admin/realms/demo/users", method: .get) { $0.status }
                XCTAssertEqual(bare, .unauthorized)
            }
            server.clock.advance(by: 61)
            _ = try await reader.call(.post, "/admin/realms/demo/users", json: ["username": .string("nope")])
            let refusals = try await server.runtime.audit.events(realm: "demo", query: AuditQuery(type: .adminRefused, limit: 20))
            let scope = refusals.filter { $0.detailsJSON.contains("insufficient_scope") }
            XCTAssertEqual(scope.count, 2, "one row a minute: \(refusals.map(\.detailsJSON))")
            XCTAssertEqual(scope.first?.clientId, "reader")
            XCTAssertTrue(scope.first?.detailsJSON.contains("\"suppressed\":\"2\"") == true, "\(scope.first?.detailsJSON ?? "")")
            XCTAssertEqual(refusals.filter { $0.detailsJSON.contains("invalid_token") }.count, 1)
        }
    }
}

final class AdminPathParameterTests: XCTestCase {
    /// Review of issue 33 (low): path parameters are percent-decoded, so a client id holding '/' can be read and
    /// deleted, and its Location is escaped; a NUL names nothing on either engine (404, never a storage error).
    func testPathParametersArePercentDecoded() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.clientsRead, .clientsWrite])
            let made = try await admin.call(.post, "/admin/realms/demo/clients", json: ["client_id": .string("team/ci-bot")])
            XCTAssertEqual(made.status, .created, "\(made.json)")
            XCTAssertEqual(made.headers[.location], "/admin/realms/demo/clients/team%2Fci-bot")
            let read = try await admin.call(.get, "/admin/realms/demo/clients/team%2Fci-bot")
            XCTAssertEqual(read.json["client_id"]?.stringValue, "team/ci-bot", "\(read.json)")
            for odd in ["a%00b", "%E2%28"] {
                let answer = try await admin.call(.get, "/admin/realms/demo/clients/\(odd)")
                XCTAssertEqual(answer.status, .notFound, odd)
            }
            // Not a URL at all: its proof's htu cannot be normalized, a 401 before any lookup.
            let malformed = try await admin.call(.get, "/admin/realms/demo/clients/%ZZ")
            XCTAssertTrue((400..<500).contains(malformed.status.code), "\(malformed.status)")
            let deleted = try await admin.call(.delete, "/admin/realms/demo/clients/team%2Fci-bot")
            XCTAssertEqual(deleted.status, .noContent)
        }
    }
}
