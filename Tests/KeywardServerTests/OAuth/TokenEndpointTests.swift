// Tests: the token endpoint issues DPoP-bound tokens, authenticates clients, and refuses bad proofs and requests.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
import NIOCore
import KeywardServer
import XCTest

final class TokenEndpointTests: XCTestCase {
    func testDPoPBoundTokenCarriesTheRequiredClaims() async throws {
        try await TestServer.forEachEngine { server, client in
            let key = try SigningKey.generate(.es256)
            let answer = try await client.requestToken(proofs: [try server.tokenProof(key)])
            XCTAssertEqual(answer.status, .ok)
            XCTAssertEqual(answer.json["token_type"]?.stringValue, "DPoP")
            XCTAssertEqual(answer.json["expires_in"]?.intValue, 300)
            XCTAssertEqual(answer.headers[.cacheControl], "no-store")
            let token = try XCTUnwrap(answer.json["access_token"]?.stringValue)

            let jws = try JWS.parse(token)
            XCTAssertEqual(jws.header["typ"]?.stringValue, "at+jwt")
            XCTAssertEqual(jws.header["alg"]?.stringValue, "ES256")
            let claims = try jws.claims()
            let issuer = TestServer.publicURL + "/realms/demo"
            XCTAssertEqual(claims["iss"]?.stringValue, issuer)
            XCTAssertEqual(claims["aud"]?.stringValue, issuer)
            XCTAssertEqual(claims["azp"]?.stringValue, "push-device-client")
            XCTAssertEqual(claims["sub"]?.stringValue, "service-account-push-device-client")
            XCTAssertNotNil(claims["jti"]?.stringValue)
            let iat = try XCTUnwrap(claims["iat"]?.intValue)
            XCTAssertEqual(claims["exp"]?.intValue, iat + 300)
            XCTAssertEqual(claims["cnf"]?.objectValue?["jkt"]?.stringValue, key.publicJWK.thumbprint())

            // The signature verifies against the published JWKS under the header's kid.
            let keySet = try await server.runtime.oauth.keys.publishedKeys(realm: "demo")
            let verified = try JWTVerifier.verify(token, policy: .init(allowedAlgorithms: [.es256], keys: .set(keySet), expectedType: "at+jwt", issuer: issuer), now: server.clock.now())
            XCTAssertEqual(verified.claims["azp"]?.stringValue, "push-device-client")
        }
    }

    func testEveryProofAlgorithmIsAccepted() async throws {
        try await TestServer.forEachEngine { server, client in
            for algorithm in JWSAlgorithm.allCases {
                let key = try SigningKey.generate(algorithm)
                let answer = try await client.requestToken(proofs: [try server.tokenProof(key)])
                XCTAssertEqual(answer.status, .ok, "\(algorithm): \(answer.json)")
                let token = try XCTUnwrap(answer.json["access_token"]?.stringValue)
                XCTAssertEqual(try JWS.parse(token).claims()["cnf"]?.objectValue?["jkt"]?.stringValue, key.publicJWK.thumbprint())
            }
        }
    }

    func testPushMFAStyleProofWithExtraClaimsAndKidIsAccepted() async throws {
        try await TestServer.forEachEngine { server, client in
            let key = try SigningKey.generate(.rs256)
            let proof = try DPoPProof.make(
                key: key, method: "POST", url: server.tokenURL, issuedAt: server.clock.now(),
                extraClaims: ["sub": .string("4b1f2c7e-0000-4000-8000-000000000001"), "deviceId": .string("device-1")],
                extraHeader: ["kid": .string("device-key-1")]
            )
            let answer = try await client.requestToken(proofs: [proof])
            XCTAssertEqual(answer.status, .ok, "\(answer.json)")
        }
    }

    func testClientSecretBasicIsAccepted() async throws {
        try await TestServer.forEachEngine { server, client in
            let credentials = Data("push-device-client:device-client-secret".utf8).base64EncodedString()
            let answer = try await client.requestToken(
                body: "grant_type=client_credentials", proofs: [try server.tokenProof(try SigningKey.generate(.es256))],
                extraHeaders: [.authorization: "Basic " + credentials]
            )
            XCTAssertEqual(answer.status, .ok, "\(answer.json)")
        }
    }

    func testClientAuthenticationFailures() async throws {
        try await TestServer.forEachEngine { server, client in
            let key = try SigningKey.generate(.es256)
            let wrongSecret = try await client.requestToken(
                body: "grant_type=client_credentials&client_id=push-device-client&client_secret=nope", proofs: [try server.tokenProof(key)]
            )
            XCTAssertEqual(wrongSecret.status, .unauthorized)
            XCTAssertEqual(wrongSecret.json["error"]?.stringValue, "invalid_client")

            let unknown = try await client.requestToken(
                body: "grant_type=client_credentials&client_id=ghost&client_secret=device-client-secret", proofs: [try server.tokenProof(key)]
            )
            XCTAssertEqual(unknown.status, .unauthorized)
            XCTAssertEqual(unknown.json["error"]?.stringValue, "invalid_client")

            let noSecret = try await client.requestToken(body: "grant_type=client_credentials&client_id=push-device-client", proofs: [try server.tokenProof(key)])
            XCTAssertEqual(noSecret.json["error"]?.stringValue, "invalid_client")

            let both = try await client.requestToken(
                body: Form.demoClient, proofs: [try server.tokenProof(key)],
                extraHeaders: [.authorization: "Basic " + Data("push-device-client:device-client-secret".utf8).base64EncodedString()]
            )
            XCTAssertEqual(both.status, .badRequest)
            XCTAssertEqual(both.json["error"]?.stringValue, "invalid_request")

            let badBasic = try await client.requestToken(body: "grant_type=client_credentials", proofs: [try server.tokenProof(key)], extraHeaders: [.authorization: "Basic !!!"])
            XCTAssertEqual(badBasic.status, .unauthorized)
            XCTAssertEqual(badBasic.json["error"]?.stringValue, "invalid_client")
        }
    }

    func testDPoPRequiredClientWithoutProofIsRefused() async throws {
        try await TestServer.forEachEngine { _, client in
            let answer = try await client.requestToken(proofs: [])
            XCTAssertEqual(answer.status, .badRequest)
            XCTAssertEqual(answer.json["error"]?.stringValue, "invalid_dpop_proof")
        }
    }

    func testClientWithoutDPoPRequirementGetsBearerToken() async throws {
        try await TestServer.forEachEngine { server, client in
            let (_, secret) = try await server.runtime.oauth.clients.createClient(realm: "demo", clientId: "batch-job", requireDPoP: false, scope: "read write")
            let answer = try await client.requestToken(body: "grant_type=client_credentials&client_id=batch-job&client_secret=\(secret)&scope=read", proofs: [])
            XCTAssertEqual(answer.status, .ok, "\(answer.json)")
            XCTAssertEqual(answer.json["token_type"]?.stringValue, "Bearer")
            XCTAssertEqual(answer.json["scope"]?.stringValue, "read")

            let tooMuch = try await client.requestToken(body: "grant_type=client_credentials&client_id=batch-job&client_secret=\(secret)&scope=admin", proofs: [])
            XCTAssertEqual(tooMuch.status, .badRequest)
            XCTAssertEqual(tooMuch.json["error"]?.stringValue, "invalid_scope")
        }
    }

    func testReplayedProofIsRefused() async throws {
        try await TestServer.forEachEngine { server, client in
            let proof = try server.tokenProof(try SigningKey.generate(.es256))
            let first = try await client.requestToken(proofs: [proof])
            XCTAssertEqual(first.status, .ok)
            let second = try await client.requestToken(proofs: [proof])
            XCTAssertEqual(second.status, .badRequest)
            XCTAssertEqual(second.json["error"]?.stringValue, "invalid_dpop_proof")
        }
    }

    func testProofForAnotherURLOrMethodIsRefused() async throws {
        try await TestServer.forEachEngine { server, client in
            let key = try SigningKey.generate(.es256)
            for proof in [
                try server.tokenProof(key, url: TestServer.publicURL + "/realms/other/protocol/openid-connect/token"),
                try server.tokenProof(key, url: "https://keyward.test/realms/demo/protocol/openid-connect/token"),
                try server.tokenProof(key, method: "GET"),
            ] {
                let answer = try await client.requestToken(proofs: [proof])
                XCTAssertEqual(answer.status, .badRequest)
                XCTAssertEqual(answer.json["error"]?.stringValue, "invalid_dpop_proof")
            }
        }
    }

    func testStaleOrFutureProofIsRefusedButSmallSkewIsAccepted() async throws {
        try await TestServer.forEachEngine { server, client in
            let key = try SigningKey.generate(.es256)
            let now = server.clock.now()
            for (offset, accepted) in [(-3600.0, false), (3600, false), (-61, false), (16, false), (-10, true), (10, true)] {
                let proof = try DPoPProof.make(key: key, method: "POST", url: server.tokenURL, issuedAt: now.addingTimeInterval(offset))
                let answer = try await client.requestToken(proofs: [proof])
                XCTAssertEqual(answer.status, accepted ? .ok : .badRequest, "iat offset \(offset)")
            }
        }
    }

    func testTwoDPoPHeadersAreRefused() async throws {
        try await TestServer.forEachEngine { server, client in
            let key = try SigningKey.generate(.es256)
            let answer = try await client.requestToken(proofs: [try server.tokenProof(key), try server.tokenProof(key)])
            XCTAssertEqual(answer.status, .badRequest)
            XCTAssertEqual(answer.json["error"]?.stringValue, "invalid_dpop_proof")
        }
    }

    func testMalformedRequestsGetStableErrors() async throws {
        try await TestServer.forEachEngine { server, client in
            let key = try SigningKey.generate(.es256)
            let unsupported = try await client.requestToken(body: "grant_type=password&client_id=push-device-client&client_secret=device-client-secret", proofs: [try server.tokenProof(key)])
            XCTAssertEqual(unsupported.status, .badRequest)
            XCTAssertEqual(unsupported.json["error"]?.stringValue, "unsupported_grant_type")

            let missing = try await client.requestToken(body: "client_id=push-device-client", proofs: [])
            XCTAssertEqual(missing.json["error"]?.stringValue, "invalid_request")

            let duplicate = try await client.requestToken(body: Form.demoClient + "&grant_type=client_credentials", proofs: [try server.tokenProof(key)])
            XCTAssertEqual(duplicate.status, .badRequest)
            XCTAssertEqual(duplicate.json["error"]?.stringValue, "invalid_request")

            let badEscape = try await client.requestToken(body: "grant_type=%zz", proofs: [])
            XCTAssertEqual(badEscape.json["error"]?.stringValue, "invalid_request")

            let garbageProof = try await client.requestToken(proofs: ["not.a.jwt"])
            XCTAssertEqual(garbageProof.status, .badRequest)
            XCTAssertEqual(garbageProof.json["error"]?.stringValue, "invalid_dpop_proof")

            let json = try await client.execute(uri: "/realms/demo/protocol/openid-connect/token", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: "{}")) { $0 }
            XCTAssertEqual(json.status, .badRequest)

            let huge = try await client.execute(
                uri: "/realms/demo/protocol/openid-connect/token", method: .post, headers: .form(),
                body: ByteBuffer(string: "grant_type=" + String(repeating: "a", count: 70_000))
            ) { $0 }
            XCTAssertEqual(huge.status, .contentTooLarge)
            XCTAssertEqual(try StrictJSON.parseObject(huge.body.readableBytesView)["error"]?.stringValue, "payload_too_large")

            let unknownRealm = try await client.execute(uri: "/realms/nope/protocol/openid-connect/token", method: .post, headers: .form(), body: ByteBuffer(string: Form.demoClient)) { $0 }
            XCTAssertEqual(unknownRealm.status, .notFound)
            XCTAssertEqual(try StrictJSON.parseObject(unknownRealm.body.readableBytesView)["error"]?.stringValue, "realm_not_found")
        }
    }
}
