// Tests: with dpop.requireNonce, the token endpoint hands out a nonce and refuses proofs without a current one.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
import NIOCore
import KeywardServer
import XCTest

/// `dpop.requireNonce`: the token endpoint hands out a nonce and refuses proofs without a current one.
final class DPoPNonceTests: XCTestCase {
    func testNonceChallengeThenSuccessThenExpiry() async throws {
        try await TestServer.forEachEngine(configure: { $0.dpopRequireNonce = true }) { server, client in
            let key = try SigningKey.generate(.es256)
            let challenge = try await client.requestToken(proofs: [try server.tokenProof(key)])
            XCTAssertEqual(challenge.status, .badRequest)
            XCTAssertEqual(challenge.json["error"]?.stringValue, "use_dpop_nonce")
            let nonce = try XCTUnwrap(challenge.headers[HTTPField.Name("DPoP-Nonce")!])

            let withNonce = try DPoPProof.make(key: key, method: "POST", url: server.tokenURL, issuedAt: server.clock.now(), nonce: nonce)
            let success = try await client.requestToken(proofs: [withNonce])
            XCTAssertEqual(success.status, .ok, "\(success.json)")
            XCTAssertNotNil(success.headers[HTTPField.Name("DPoP-Nonce")!])

            let forged = try DPoPProof.make(key: key, method: "POST", url: server.tokenURL, issuedAt: server.clock.now(), nonce: "AAAAAAAAAAA" + nonce.dropFirst(11))
            let refused = try await client.requestToken(proofs: [forged])
            XCTAssertEqual(refused.json["error"]?.stringValue, "use_dpop_nonce")

            // A nonce is good for at most two 60-second steps.
            server.clock.advance(by: 121)
            let stale = try DPoPProof.make(key: key, method: "POST", url: server.tokenURL, issuedAt: server.clock.now(), nonce: nonce)
            let expired = try await client.requestToken(proofs: [stale])
            XCTAssertEqual(expired.json["error"]?.stringValue, "use_dpop_nonce")
        }
    }
}
