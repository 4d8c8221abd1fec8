// Tests: device EC keys with one-byte-short coordinates are accepted wherever they arrive; JWKS keys stay strict.
import Foundation
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// The Keycloak extension's demo clients write EC coordinates as minimal big-endian integers: a coordinate whose
/// first byte is zero arrives one byte short (about half of all P-521 keys, one P-256 / P-384 key in 128).
/// Keycloak reads them as unsigned integers and accepts them, so Keyward must too, wherever a device key arrives:
/// enrollment, the token endpoint's DPoP proof, the device API's proofs and rotation. Thumbprints are computed
/// over the padded form, so the token's `cnf.jkt` and the stored device key agree.
final class ShortCoordinateKeyTests: XCTestCase {
    /// A key of `algorithm` whose x or y coordinate starts with a zero byte.
    static func keyWithALeadingZero(_ algorithm: JWSAlgorithm) throws -> SigningKey {
        while true {
            let key = try SigningKey.generate(algorithm)
            guard case .ec(_, let x, let y) = key.publicJWK.material else { throw CancellationError() }
            if x.first == 0 || y.first == 0 { return key }
        }
    }

    func testDeviceWithShortCoordinatesEnrollsGetsATokenApprovesAndRotates() async throws {
        try await TestServer.forEachEngine { server, client in
            for algorithm in [JWSAlgorithm.es256, .es384, .es512] {
                let user = try await server.demoUser()
                var device = try TestDevice(server: server, userId: user.id, algorithm: algorithm)
                device.key = try Self.keyWithALeadingZero(algorithm)
                device.minimalCoordinates = true
                XCTAssertNotEqual(device.wireJWK, device.key.publicJWK.requiredMembers, "\(algorithm): the test key must be written short")

                let enrollment = try await server.startEnrollment(user)
                let enrolled = try await device.enroll(client, enrollmentToken: enrollment.enrollmentToken)
                XCTAssertEqual(enrolled.status, .ok, "\(algorithm) enrollment: \(enrolled.body)")

                let answer = try await client.requestToken(proofs: [try device.proof(method: "POST", url: server.tokenURL)])
                XCTAssertEqual(answer.status, .ok, "\(algorithm) token: \(answer.json)")
                let token = try XCTUnwrap(answer.json["access_token"]?.stringValue)
                let claims = try JWS.parse(token).claims()
                XCTAssertEqual(claims["cnf"]?.objectValue?["jkt"]?.stringValue, device.key.publicJWK.thumbprint(), "bound to the padded key's thumbprint")

                let (challenge, _) = try await server.createdChallenge()
                let pending = try await device.pending(client, token: token)
                XCTAssertEqual(pending.status, .ok, "\(algorithm) pending: \(pending.body)")
                let approved = try await device.respond(client, token: token, challengeId: challenge.id)
                XCTAssertEqual(approved.status, .ok, "\(algorithm) approve: \(approved.body)")

                let next = try Self.keyWithALeadingZero(algorithm)
                var rotated = device
                rotated.key = next
                var newJWK = rotated.wireJWK
                newJWK["alg"] = .string(algorithm.rawValue)
                let rotation = try await device.call(client, .put, "/device/rotate-key", token: token, json: ["publicKeyJwk": .object(newJWK)])
                XCTAssertEqual(rotation.status, .ok, "\(algorithm) rotation: \(rotation.body)")
                let newToken = try await rotated.accessToken(client)
                let afterRotation = try await rotated.pending(client, token: newToken)
                XCTAssertEqual(afterRotation.status, .ok, "\(algorithm) after rotation: \(afterRotation.body)")

                for stored in try await server.runtime.pushMFA.service.devices(realm: "demo", userId: user.id) {
                    try await server.runtime.pushMFA.service.removeDevice(realm: "demo", userId: user.id, credentialId: stored.id)
                }
            }
        }
    }

    /// Keys Keyward reads from a JWKS or publishes stay strict: a short coordinate there is refused.
    func testJWKSetKeysStayStrict() throws {
        let key = try Self.keyWithALeadingZero(.es512)
        var members = key.publicJWK.requiredMembers
        for member in ["x", "y"] {
            let bytes = try Base64URL.decode(members[member]!.stringValue!)
            members[member] = .string(Base64URL.encode(Array(bytes.drop { $0 == 0 })))
        }
        XCTAssertThrowsError(try JWK(json: members))
        let set = try JWKSet(json: StrictJSON.serialize(["keys": .array([.object(members)])]))
        XCTAssertTrue(set.keys.isEmpty, "a JWKS entry with a short coordinate is skipped")
    }
}
