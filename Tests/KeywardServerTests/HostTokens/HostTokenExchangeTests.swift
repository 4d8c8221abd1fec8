// Tests: the jwt-bearer grant turns an enrolled user's host token into a DPoP-bound Keyward access token.
import Foundation
import HTTPTypes
import KeywardJOSE
import KeywardServer
import XCTest

/// The jwt-bearer grant (RFC 7523) end to end through the token endpoint: a host token of an enrolled user becomes
/// a DPoP-bound Keyward access token for that user, which the DPoP gate then accepts.
final class HostTokenExchangeTests: XCTestCase {
    func testJWKSIssuerTokenIsExchangedForADPoPBoundTokenOfTheEnrolledUser() async throws {
        try await TestServer.forEachEngine { server, client in
            try await JWKSTestServer().run { jwks in
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1")])
                try await HostTokenFixture.register(server, jwksURL: jwks.url)
                let user = try await XCTUnwrapAsync(try await server.runtime.accounts.users.user(realm: "demo", username: HostTokenFixture.subject))

                let key = try SigningKey.generate(.es256)
                let answer = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: key)
                XCTAssertEqual(answer.status, .ok, "\(answer.json)")
                XCTAssertEqual(answer.json["token_type"]?.stringValue, "DPoP")
                XCTAssertEqual(answer.json["expires_in"]?.intValue, 300)
                XCTAssertNil(answer.json["refresh_token"], "the app asks its signer for a new host token instead")
                let token = try XCTUnwrap(answer.json["access_token"]?.stringValue)
                let claims = try JWS.parse(token).claims()
                XCTAssertEqual(claims["sub"]?.stringValue, user.id)
                XCTAssertEqual(claims["azp"]?.stringValue, HostTokenFixture.appClient)
                XCTAssertEqual(claims["cnf"]?.objectValue?["jkt"]?.stringValue, key.publicJWK.thumbprint())

                let whoami = try await client.whoami(authorization: ["DPoP " + token], proofs: [try server.resourceProof(key, token: token)])
                XCTAssertEqual(whoami.status, .ok, "\(whoami.json)")
                XCTAssertEqual(whoami.json["sub"]?.stringValue, user.id)
            }
        }
    }

    func testPEMIssuerTokenIsAcceptedWithoutAKidAndWithTheCertificateThumbprintAsKid() async throws {
        try await TestServer.forEachEngine { server, client in
            let pem = try HostTokenFixture.certificatePEM(1, notBefore: server.clock.now().addingTimeInterval(-86400), days: 30)
            try await HostTokenFixture.register(server, jwksURL: nil, pem: pem)
            let key = try SigningKey.generate(.es256)
            for kid in [nil, try HostTokenFixture.x5tS256(pem)] {
                let token = try HostTokenFixture.token(
                    now: server.clock.now(), key: 1, kid: kid, iss: HostTokenFixture.pemIssuer, changes: ["sub": .string("pem-" + HostTokenFixture.subject)]
                )
                let answer = try await client.exchange(server, token, key: key)
                XCTAssertEqual(answer.status, .ok, "kid \(kid ?? "absent"): \(answer.json)")
            }
        }
    }

    func testBearerExchangeOnlyWhereTheIssuerAllowsIt() async throws {
        try await TestServer.forEachEngine { server, client in
            try await JWKSTestServer().run { jwks in
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1")])
                try await HostTokenFixture.register(server, jwksURL: jwks.url)
                _ = try await server.runtime.oauth.clients.createPublicClient(realm: "demo", clientId: "bearer-app", requireDPoP: false)

                let refused = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), client: "bearer-app")
                XCTAssertEqual(refused.status, .badRequest)
                XCTAssertEqual(refused.json["error"]?.stringValue, "invalid_dpop_proof")
                XCTAssertEqual(refused.json["reason"]?.stringValue, "dpop_proof_required")

                _ = try await server.runtime.hostTokens.issuers.add(.init(realm: "demo", issuer: "https://bearer.example", jwksURL: jwks.url, allowBearer: true))
                _ = try await server.runtime.hostTokens.issuers.enroll(realm: "demo", issuer: "https://bearer.example", subjects: ["bearer-user"])
                let token = try HostTokenFixture.token(now: server.clock.now(), iss: "https://bearer.example", changes: ["sub": .string("bearer-user")])
                let bearer = try await client.exchange(server, token, client: "bearer-app")
                XCTAssertEqual(bearer.status, .ok, "\(bearer.json)")
                XCTAssertEqual(bearer.json["token_type"]?.stringValue, "Bearer")
            }
        }
    }

    /// The jti is spent only once the DPoP proof has verified: a request refused for its proof does not burn it.
    func testARefusedProofDoesNotSpendTheHostToken() async throws {
        try await TestServer.forEachEngine { server, client in
            try await JWKSTestServer().run { jwks in
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1")])
                try await HostTokenFixture.register(server, jwksURL: jwks.url)
                let token = try HostTokenFixture.token(now: server.clock.now())
                let key = try SigningKey.generate(.es256)
                let staleProof = try DPoPProof.make(key: key, method: "POST", url: server.tokenURL, issuedAt: server.clock.now().addingTimeInterval(-3600))
                let refused = try await client.requestToken(body: HostTokenFixture.form(token), proofs: [staleProof])
                XCTAssertEqual(refused.json["error"]?.stringValue, "invalid_dpop_proof")
                let accepted = try await client.exchange(server, token, key: key)
                XCTAssertEqual(accepted.status, .ok, "\(accepted.json)")
                let replayed = try await client.exchange(server, token, key: key)
                XCTAssertEqual(replayed.json["reason"]?.stringValue, "jti_replayed")
            }
        }
    }

    /// The proof's jti and the host token's are recorded in one statement, each judged on its own.
    func testAReplayedProofIsRefusedOnTheGrantToo() async throws {
        try await TestServer.forEachEngine { server, client in
            try await JWKSTestServer().run { jwks in
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1")])
                try await HostTokenFixture.register(server, jwksURL: jwks.url)
                let proof = try server.tokenProof(try SigningKey.generate(.es256))
                let first = try await client.requestToken(body: HostTokenFixture.form(try HostTokenFixture.token(now: server.clock.now())), proofs: [proof])
                XCTAssertEqual(first.status, .ok, "\(first.json)")
                let replayed = try await client.requestToken(body: HostTokenFixture.form(try HostTokenFixture.token(now: server.clock.now())), proofs: [proof])
                XCTAssertEqual(replayed.status, .badRequest)
                XCTAssertEqual(replayed.json["error"]?.stringValue, "invalid_dpop_proof", "\(replayed.json)")
                XCTAssertTrue(replayed.json["error_description"]?.stringValue?.contains("already been used") ?? false, "\(replayed.json)")
            }
        }
    }

    /// A host token carrying `cnf.jkt` can be exchanged only with a proof by that key: a token read off the wire is
    /// of no use to whoever does not hold the app's key.
    func testAHostTokenBoundToAKeyNeedsThatKeysProof() async throws {
        try await TestServer.forEachEngine { server, client in
            try await JWKSTestServer().run { jwks in
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1")])
                try await HostTokenFixture.register(server, jwksURL: jwks.url)
                let appKey = try SigningKey.generate(.es256), thief = try SigningKey.generate(.es256)
                let cnf: JSONValue = .object(["jkt": .string(appKey.publicJWK.thumbprint())])
                let stolen = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now(), changes: ["cnf": cnf]), key: thief)
                XCTAssertEqual(stolen.json["error"]?.stringValue, "invalid_grant", "\(stolen.json)")
                XCTAssertEqual(stolen.json["reason"]?.stringValue, "cnf_mismatch", "\(stolen.json)")
                let own = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now(), changes: ["cnf": cnf]), key: appKey)
                XCTAssertEqual(own.status, .ok, "\(own.json)")
                let malformed = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now(), changes: ["cnf": "x"]), key: appKey)
                XCTAssertEqual(malformed.json["reason"]?.stringValue, "invalid_claim", "\(malformed.json)")
            }
        }
    }

    func testPublicClientsAndDiscovery() async throws {
        try await TestServer.forEachEngine { server, client in
            _ = try await server.runtime.oauth.clients.createPublicClient(realm: "demo", clientId: HostTokenFixture.appClient)
            let credentials = try await client.requestToken(
                body: "grant_type=client_credentials&client_id=\(HostTokenFixture.appClient)", proofs: [try server.tokenProof(try SigningKey.generate(.es256))]
            )
            XCTAssertEqual(credentials.status, .badRequest)
            XCTAssertEqual(credentials.json["error"]?.stringValue, "unauthorized_client")

            // A confidential client must still authenticate on the new grant.
            let unauthenticated = try await client.exchange(server, "x.y.z", key: try SigningKey.generate(.es256), client: "push-device-client")
            XCTAssertEqual(unauthenticated.status, .unauthorized)
            XCTAssertEqual(unauthenticated.json["error"]?.stringValue, "invalid_client")

            let missing = try await client.requestToken(
                body: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&client_id=\(HostTokenFixture.appClient)", proofs: []
            )
            XCTAssertEqual(missing.json["error"]?.stringValue, "invalid_request")
            XCTAssertTrue(missing.json["error_description"]?.stringValue?.contains("assertion") ?? false, "\(missing.json)")

            let discovery = try await client.execute(uri: "/realms/demo/.well-known/openid-configuration", method: .get) { response in
                try StrictJSON.parseObject(response.body.readableBytesView)
            }
            XCTAssertEqual(
                discovery["grant_types_supported"]?.arrayValue?.compactMap(\.stringValue),
                ["client_credentials", "authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer"]
            )
        }
    }
}

func XCTUnwrapAsync<T>(_ value: @autoclosure () async throws -> T?, file: StaticString = #filePath, line: UInt = #line) async throws -> T {
    let resolved = try await value()
    return try XCTUnwrap(resolved, file: file, line: line)
}
