// Tests: a realm's discovery document and JWKS name its endpoints and only public key members; unknown realm 404.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
import NIOCore
import KeywardServer
import XCTest

final class DiscoveryTests: XCTestCase {
    func testDiscoveryDocumentNamesTheRealmEndpoints() async throws {
        try await TestServer.forEachEngine { _, client in
            try await client.execute(uri: "/realms/demo/.well-known/openid-configuration", method: .get) { response in
                XCTAssertEqual(response.status, .ok)
                let metadata = try StrictJSON.parseObject(response.body.readableBytesView)
                let issuer = TestServer.publicURL + "/realms/demo"
                XCTAssertEqual(metadata["issuer"]?.stringValue, issuer)
                XCTAssertEqual(metadata["jwks_uri"]?.stringValue, issuer + "/protocol/openid-connect/certs")
                XCTAssertEqual(metadata["token_endpoint"]?.stringValue, issuer + "/protocol/openid-connect/token")
                let algorithms = metadata["dpop_signing_alg_values_supported"]?.arrayValue?.compactMap(\.stringValue) ?? []
                XCTAssertTrue(algorithms.contains("ES256") && algorithms.contains("RS256"))
                XCTAssertFalse(algorithms.contains { $0.hasPrefix("HS") || $0 == "none" })
            }
        }
    }

    func testJWKSPublishesOnlyPublicMembers() async throws {
        try await TestServer.forEachEngine { _, client in
            try await client.execute(uri: "/realms/demo/protocol/openid-connect/certs", method: .get) { response in
                XCTAssertEqual(response.status, .ok)
                XCTAssertEqual(response.headers[.contentType], "application/jwk-set+json")
                let document = try StrictJSON.parseObject(response.body.readableBytesView)
                let keys = try XCTUnwrap(document["keys"]?.arrayValue)
                XCTAssertEqual(keys.count, 1)
                let key = try XCTUnwrap(keys.first?.objectValue)
                XCTAssertEqual(key["kty"]?.stringValue, "EC")
                XCTAssertEqual(key["alg"]?.stringValue, "ES256")
                XCTAssertEqual(key["use"]?.stringValue, "sig")
                XCTAssertNil(key["d"])
                XCTAssertEqual(key["kid"]?.stringValue, try JWK(json: key).thumbprint())
            }
        }
    }

    func testUnknownRealmIs404WithStableCode() async throws {
        try await TestServer.forEachEngine { _, client in
            for path in ["/realms/nope/.well-known/openid-configuration", "/realms/nope/protocol/openid-connect/certs", "/realms/..%2F/v1/whoami", "/realms/" + String(repeating: "a", count: 300) + "/protocol/openid-connect/certs"] {
                try await client.execute(uri: path, method: .get) { response in
                    XCTAssertEqual(response.status, .notFound, path)
                    XCTAssertEqual(try StrictJSON.parseObject(response.body.readableBytesView)["error"]?.stringValue, "realm_not_found", path)
                }
            }
        }
    }
}
