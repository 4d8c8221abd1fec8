// Tests: the hand-off API over HTTP — a relay client stores a blob for a session key, the app takes it with a proof
// by that key; every bad input is refused with a stable code and leaves the hand-off as it was.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class HandoffRouteTests: XCTestCase {
    private static let putPath = "/realms/demo/v1/broker/handoff"
    private static let takePath = "/realms/demo/v1/broker/handoff/take"
    private static let dpop = HTTPField.Name("DPoP")!

    func testARelayClientStoresABlobThatTheSessionKeyTakesOnce() async throws {
        try await TestServer.forEachEngine { server, client in
            let relay = try await client.relayClientToken(server)
            let sessionKey = try SigningKey.generate(.edDSA)
            let blob = #"{"delegations":[{"delegation":{"pubkey":"302a300506032b6570032100","expiration":"1"},"signature":"00"}],"publicKey":"00"}"#
            let stored = try await client.putHandoff(server, relay, ["nonce": "n-1", "jkt": .string(try sessionKey.publicJWK.thumbprint()), "blob": .string(blob), "expires_in": 60])
            XCTAssertEqual(stored.status, .created, "\(stored.json)")
            XCTAssertEqual(stored.json["expires_in"]?.numberValue, 60)
            XCTAssertEqual(stored.headers[.cacheControl], "no-store")
            let code = try XCTUnwrap(stored.json["code"]?.stringValue)

            let taken = try await client.take(server, code: code, nonce: "n-1", key: sessionKey)
            XCTAssertEqual(taken.status, .ok, "\(taken.json)")
            XCTAssertEqual(taken.json["kind"]?.stringValue, "blob")
            XCTAssertEqual(taken.json["value"]?.stringValue, blob)
            XCTAssertEqual(taken.json["client_id"]?.stringValue, "relay", "the relay client that stored it")
            XCTAssertEqual(taken.headers[.cacheControl], "no-store")
            let again = try await client.take(server, code: code, nonce: "n-1", key: sessionKey)
            XCTAssertEqual(again.status, .badRequest)
            XCTAssertEqual(again.json["error"]?.stringValue, "handoff_invalid")

            // Without expires_in, the realm's setting.
            var settings = BrokerSettings()
            try settings.apply("handoffLifetimeSeconds", "45")
            try await server.runtime.broker.settings.save(settings, realm: "demo")
            let realmDefault = try await client.putHandoff(server, relay, ["nonce": "n-2", "jkt": .string(try sessionKey.publicJWK.thumbprint()), "blob": "b"])
            XCTAssertEqual(realmDefault.json["expires_in"]?.numberValue, 45)
        }
    }

    func testAPutIsRefusedForAClientThatIsNoRelayAndForABadBody() async throws {
        try await TestServer.forEachEngine(engines: [.sqlite]) { server, client in
            let key = try SigningKey.generate(.es256)
            let notRelay = try await client.demoToken(server, key: key)
            let jkt = JSONValue.string(try key.publicJWK.thumbprint())
            let refused = try await client.putHandoff(server, (notRelay, key), ["nonce": "n", "jkt": jkt, "blob": "b"])
            XCTAssertEqual(refused.status, .forbidden)
            XCTAssertEqual(refused.json["error"]?.stringValue, "unauthorized_client")

            let noToken = try await client.postJSON(Self.putPath, ["nonce": "n", "jkt": jkt, "blob": "b"])
            XCTAssertEqual(noToken.status, .unauthorized)

            let relay = try await client.relayClientToken(server)
            let oversize = String(repeating: "a", count: HandoffService.maxBlobSize + 1)
            for bad: JSONObject in [
                ["jkt": jkt, "blob": "b"], ["nonce": "n", "blob": "b"], ["nonce": "n", "jkt": "short", "blob": "b"], ["nonce": "n", "jkt": jkt],
                ["nonce": "n", "jkt": jkt, "blob": ""], ["nonce": "n", "jkt": jkt, "blob": .string(oversize)],
                ["nonce": "n", "jkt": jkt, "blob": "b", "expires_in": 301], ["nonce": "n", "jkt": jkt, "blob": "b", "expires_in": 1.5],
                ["nonce": "n", "jkt": jkt, "blob": "b", "expires_in": "60"],
            ] {
                let answer = try await client.putHandoff(server, relay, bad)
                XCTAssertEqual(answer.status, .badRequest, "\(bad.keys.sorted())")
                XCTAssertEqual(answer.json["error"]?.stringValue, "invalid_request")
            }
        }
    }

    /// A NUL in any string of the body is the client's error on both engines: PostgreSQL cannot store text holding
    /// one, and the put answered 503 there (found by schemathesis in a PostgreSQL contract run).
    func testANULInTheBodyIsABadRequestOnBothEngines() async throws {
        try await TestServer.forEachEngine { server, client in
            let relay = try await client.relayClientToken(server)
            let jkt = JSONValue.string(try SigningKey.generate(.es256).publicJWK.thumbprint())
            for bad: JSONObject in [
                ["nonce": "n", "jkt": jkt, "blob": "a\u{0}b"], ["nonce": "n\u{0}", "jkt": jkt, "blob": "b"], ["nonce": "n", "jkt": jkt, "blob": "b", "x\u{0}": "y"],
            ] {
                let answer = try await client.putHandoff(server, relay, bad)
                XCTAssertEqual(answer.status, .badRequest, "\(answer.json)")
                XCTAssertEqual(answer.json["error"]?.stringValue, "invalid_request")
            }
            let form = try await client.requestToken(body: Form.demoClient + "&scope=a%00b", proofs: [])
            XCTAssertEqual(form.status, .badRequest, "\(form.json)")
            XCTAssertEqual(form.json["error"]?.stringValue, "invalid_request")
        }
    }

    func testATakeNeedsOneProofWithoutAnAccessTokenHashAndAWellFormedBody() async throws {
        try await TestServer.forEachEngine(engines: [.sqlite]) { server, client in
            try await server.registerBrokerApp()
            let key = try SigningKey.generate(.es256)
            let code = try await server.runtime.broker.handoffs.put(
                realm: "demo", clientId: "broker-app", nonce: "n", jkt: try key.publicJWK.thumbprint(), kind: .delegation, blob: "d"
            )
            let body: JSONObject = ["code": .string(code), "nonce": "n"]
            let noProof = try await client.postJSON(Self.takePath, body)
            XCTAssertEqual(noProof.status, .badRequest)
            XCTAssertEqual(noProof.json["error"]?.stringValue, "invalid_dpop_proof")

            let url = TestServer.publicURL + Self.takePath
            let withAth = try DPoPProof.make(key: key, method: "POST", url: url, issuedAt: server.clock.now(), accessToken: "not-a-token")
            let athAnswer = try await client.postJSON(Self.takePath, body, headers: [Self.dpop: withAth])
            XCTAssertEqual(athAnswer.json["error"]?.stringValue, "invalid_dpop_proof")
            let misdirected = try await client.postJSON(Self.takePath, body, headers: [Self.dpop: try server.tokenProof(key)])
            XCTAssertEqual(misdirected.json["error"]?.stringValue, "invalid_dpop_proof", "a proof for another URL")

            for bad: JSONObject in [[:], ["code": .string(code)], ["code": 1, "nonce": "n"], ["code": .string(String(repeating: "a", count: 65)), "nonce": "n"]] {
                let proof = try DPoPProof.make(key: key, method: "POST", url: url, issuedAt: server.clock.now())
                let answer = try await client.postJSON(Self.takePath, bad, headers: [Self.dpop: proof])
                XCTAssertEqual(answer.status, .badRequest)
                XCTAssertEqual(answer.json["error"]?.stringValue, "invalid_request", "\(bad)")
            }
            let notJSON = try await client.postRaw(Self.takePath, bytes: Array("code=x".utf8), contentType: "application/x-www-form-urlencoded")
            XCTAssertEqual(notJSON.status, .unsupportedMediaType)
            let large = try await client.postRaw(Self.takePath, bytes: Array(repeating: 0x20, count: 2000))
            XCTAssertEqual(large.status, .contentTooLarge)

            let otherKey = try await client.take(server, code: code, nonce: "n", key: try SigningKey.generate(.edDSA))
            XCTAssertEqual(otherKey.json["error"]?.stringValue, "handoff_invalid")
            let taken = try await client.take(server, code: code, nonce: "n", key: key)
            XCTAssertEqual(taken.status, .ok, "untouched by all of it")
            XCTAssertEqual(taken.json["kind"]?.stringValue, "delegation")
        }
    }

    func testTwentyConcurrentTakesOverHTTPGiveTheHandoffOnce() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.registerBrokerApp()
            let key = try SigningKey.generate(.es256)
            let code = try await server.runtime.broker.handoffs.put(
                realm: "demo", clientId: "broker-app", nonce: "n", jkt: try key.publicJWK.thumbprint(), kind: .delegation, blob: "once"
            )
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await client.take(server, code: code, nonce: "n", key: key).status }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            XCTAssertEqual(statuses.filter { $0 == .ok }.count, 1, "\(statuses)")
            XCTAssertEqual(statuses.filter { $0 == .badRequest }.count, 19)
        }
    }
}

extension TestClientProtocol {
    /// A confidential relay client (`--broker`) and a DPoP-bound client_credentials token for a key of its own.
    func relayClientToken(_ server: TestServer) async throws -> (token: String, key: SigningKey) {
        _ = try await server.runtime.oauth.clients.createClient(
            realm: "demo", clientId: "relay", secret: "relay-client-secret", redirects: ClientRedirects(broker: true)
        )
        let key = try SigningKey.generate(.es256)
        let answer = try await requestToken(
            body: "grant_type=client_credentials&client_id=relay&client_secret=relay-client-secret", proofs: [try server.tokenProof(key)]
        )
        return (try XCTUnwrap(answer.json["access_token"]?.stringValue, "\(answer.json)"), key)
    }

    func putHandoff(_ server: TestServer, _ relay: (token: String, key: SigningKey), _ body: JSONObject) async throws -> JSONAnswer {
        let url = TestServer.publicURL + "/realms/demo/v1/broker/handoff"
        let proof = try DPoPProof.make(key: relay.key, method: "POST", url: url, issuedAt: server.clock.now(), accessToken: relay.token)
        return try await postJSON(
            "/realms/demo/v1/broker/handoff", body, headers: [.authorization: "DPoP " + relay.token, HTTPField.Name("DPoP")!: proof]
        )
    }

    func take(_ server: TestServer, code: String, nonce: String, key: SigningKey) async throws -> JSONAnswer {
        let url = TestServer.publicURL + "/realms/demo/v1/broker/handoff/take"
        let proof = try DPoPProof.make(key: key, method: "POST", url: url, issuedAt: server.clock.now())
        return try await postJSON("/realms/demo/v1/broker/handoff/take", ["code": .string(code), "nonce": .string(nonce)], headers: [HTTPField.Name("DPoP")!: proof])
    }
}
