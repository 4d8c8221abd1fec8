import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
import NIOCore
import KeywardServer
import XCTest

final class KeyRotationTests: XCTestCase {
    func testRotationKeepsThePreviousKeyPublishedUntilItsTokensExpire() async throws {
        try await TestServer.forEachEngine { server, client in
            let key = try SigningKey.generate(.es256)
            let oldToken = try await client.demoToken(server, key: key)
            let oldKid = try XCTUnwrap(try JWS.parse(oldToken).header["kid"]?.stringValue)

            let found = try await server.runtime.oauth.realms.realm(named: "demo")
            let realm = try XCTUnwrap(found)
            let newKey = try await server.runtime.oauth.keys.rotate(realm: realm)
            XCTAssertNotEqual(newKey.kid, oldKid)

            let kids = try await client.execute(uri: "/realms/demo/protocol/openid-connect/certs", method: .get) { response in
                try JWKSet(json: response.body.readableBytesView).keys.compactMap(\.kid)
            }
            XCTAssertEqual(Set(kids), [oldKid, newKey.kid])

            // New tokens are signed by the new key; old tokens still verify.
            let newToken = try await client.demoToken(server, key: key)
            XCTAssertEqual(try JWS.parse(newToken).header["kid"]?.stringValue, newKey.kid)
            let stillValid = try await client.whoami(authorization: ["DPoP " + oldToken], proofs: [try server.resourceProof(key, token: oldToken)])
            XCTAssertEqual(stillValid.status, .ok)

            // Once every token of the old key has expired, the key leaves the JWKS and the sweeper deletes it.
            server.clock.advance(by: TimeInterval(realm.accessTokenLifetime) + 31)
            let remaining = try await server.runtime.oauth.keys.listKeys(realm: "demo")
            XCTAssertEqual(remaining.map(\.kid), [newKey.kid])
        }
    }
}
