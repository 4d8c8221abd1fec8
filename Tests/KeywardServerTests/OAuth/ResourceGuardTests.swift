// Tests: the DPoP resource guard in front of whoami accepts bound tokens with matching proofs, refuses the rest.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
import NIOCore
import KeywardServer
import XCTest

/// `GET /realms/demo/v1/whoami` behind the DPoP resource guard (RFC 9449 §4.3 proof checks, §7.1 the DPoP scheme).
final class ResourceGuardTests: XCTestCase {
    func testBoundTokenWithMatchingProofIsAccepted() async throws {
        try await TestServer.forEachEngine { server, client in
            let key = try SigningKey.generate(.es256)
            let token = try await client.demoToken(server, key: key)
            let answer = try await client.whoami(authorization: ["DPoP " + token], proofs: [try server.resourceProof(key, token: token)])
            XCTAssertEqual(answer.status, .ok, "\(answer.json)")
            XCTAssertEqual(answer.json["sub"]?.stringValue, "service-account-push-device-client")
            XCTAssertEqual(answer.json["azp"]?.stringValue, "push-device-client")
            XCTAssertEqual(answer.json["cnf"]?.objectValue?["jkt"]?.stringValue, key.publicJWK.thumbprint())
            XCTAssertNotNil(answer.json["exp"]?.intValue)

            // The scheme is case-insensitive (RFC 9449 §7.1), and query strings are ignored by htu.
            let lower = try await client.whoami(authorization: ["dpop " + token], proofs: [try server.resourceProof(key, token: token)])
            XCTAssertEqual(lower.status, .ok)
        }
    }

    func testRefusals() async throws {
        try await TestServer.forEachEngine { server, client in
            let key = try SigningKey.generate(.es256)
            let token = try await client.demoToken(server, key: key)
            let other = try SigningKey.generate(.es256)

            func expect(_ authorization: [String], _ proofs: [String], error: String?, _ label: String) async throws {
                let answer = try await client.whoami(authorization: authorization, proofs: proofs)
                XCTAssertEqual(answer.status, .unauthorized, label)
                let challenge = answer.headers[.wwwAuthenticate] ?? ""
                XCTAssertTrue(challenge.hasPrefix("DPoP "), "\(label): \(challenge)")
                if let error {
                    XCTAssertTrue(challenge.contains("error=\"\(error)\""), "\(label): \(challenge)")
                    XCTAssertEqual(answer.json["error"]?.stringValue, error, label)
                }
            }

            try await expect([], [], error: nil, "no Authorization")
            try await expect(["Bearer " + token], [try server.resourceProof(key, token: token)], error: "invalid_token", "Bearer downgrade with proof")
            try await expect(["Bearer " + token], [], error: "invalid_token", "Bearer downgrade without proof")
            try await expect(["DPoP " + token], [], error: "invalid_dpop_proof", "missing proof")
            try await expect(["DPoP " + token, "DPoP " + token], [try server.resourceProof(key, token: token)], error: "invalid_token", "two Authorization headers")
            try await expect(["DPoP " + token], [try server.resourceProof(key, token: token), try server.resourceProof(key, token: token)], error: "invalid_dpop_proof", "two proofs")
            try await expect(["DPoP " + token], [try server.resourceProof(other, token: token)], error: "invalid_dpop_proof", "proof by another key (cnf.jkt mismatch)")
            try await expect(["DPoP " + token], [try server.resourceProof(key, token: token + "x")], error: "invalid_dpop_proof", "ath over another token")
            try await expect(["DPoP " + token], [try server.tokenProof(key, url: server.whoamiURL, method: "GET")], error: "invalid_dpop_proof", "ath missing")
            try await expect(["DPoP " + token], [try server.resourceProof(key, token: token, url: TestServer.publicURL + "/realms/demo/v1/other")], error: "invalid_dpop_proof", "htu of another resource")
            try await expect(["DPoP " + token], [try server.resourceProof(key, token: token, method: "POST")], error: "invalid_dpop_proof", "htm mismatch")
            try await expect(["DPoP not-a-token"], [try server.resourceProof(key, token: "not-a-token")], error: "invalid_token", "garbage token")

            // A token whose payload was altered no longer verifies.
            var parts = token.split(separator: ".").map(String.init)
            var claims = try JWS.parse(token).claims()
            claims["sub"] = .string("admin")
            parts[1] = Base64URL.encode(StrictJSON.serialize(claims))
            let tampered = parts.joined(separator: ".")
            try await expect(["DPoP " + tampered], [try server.resourceProof(key, token: tampered)], error: "invalid_token", "tampered token")

            // A token signed by a key the realm never published.
            let forger = try SigningKey.generate(.es256)
            let forged = try JWS.sign(header: ["typ": .string("at+jwt"), "kid": .string(try JWS.parse(token).header["kid"]!.stringValue!)], claims: try JWS.parse(token).claims(), key: forger)
            try await expect(["DPoP " + forged], [try server.resourceProof(key, token: forged)], error: "invalid_token", "forged signature")
        }
    }

    func testReplayedResourceProofIsRefused() async throws {
        try await TestServer.forEachEngine { server, client in
            let key = try SigningKey.generate(.es256)
            let token = try await client.demoToken(server, key: key)
            let proof = try server.resourceProof(key, token: token)
            let first = try await client.whoami(authorization: ["DPoP " + token], proofs: [proof])
            XCTAssertEqual(first.status, .ok)
            let replay = try await client.whoami(authorization: ["DPoP " + token], proofs: [proof])
            XCTAssertEqual(replay.status, .unauthorized)
            XCTAssertEqual(replay.json["error"]?.stringValue, "invalid_dpop_proof")
        }
    }

    func testExpiredTokenIsRefused() async throws {
        try await TestServer.forEachEngine { server, client in
            let key = try SigningKey.generate(.es256)
            let token = try await client.demoToken(server, key: key)
            server.clock.advance(by: 300 + 31)
            let answer = try await client.whoami(authorization: ["DPoP " + token], proofs: [try server.resourceProof(key, token: token)])
            XCTAssertEqual(answer.status, .unauthorized)
            XCTAssertEqual(answer.json["error"]?.stringValue, "invalid_token")
        }
    }

    func testBearerTokenWithoutBindingIsRefused() async throws {
        try await TestServer.forEachEngine { server, client in
            let (_, secret) = try await server.runtime.oauth.clients.createClient(realm: "demo", clientId: "batch-job", requireDPoP: false)
            let answer = try await client.requestToken(body: "grant_type=client_credentials&client_id=batch-job&client_secret=\(secret)", proofs: [])
            let token = try XCTUnwrap(answer.json["access_token"]?.stringValue)
            let key = try SigningKey.generate(.es256)
            let refused = try await client.whoami(authorization: ["DPoP " + token], proofs: [try server.resourceProof(key, token: token)])
            XCTAssertEqual(refused.status, .unauthorized)
            XCTAssertEqual(refused.json["error"]?.stringValue, "invalid_token")
        }
    }
}
