// Tests (issue 32): a registered device that rotates its key through the Devices flow carries its push approvals and
// its app sessions to the new key; the old key, and tokens bound to it, are refused from then on.
import Foundation
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class DeviceRotationTests: XCTestCase {
    func testARotatedKeyCarriesThePushCredentialAndTheAppSessions() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, oldPhone) = try await OneDeviceFixture.signedInWithPush(server, client)
            let user = try await server.demoUser()

            let next = TestInstallation()
            let nextKey = try SigningKey(algorithm: .es256, pem: next.key.pemRepresentation)
            let rotated = try await client.rotate(
                try DeviceSignedRequestTests.rotation(to: next, challenge: try await client.deviceChallenge()), signedBy: device.installation,
                deviceId: device.deviceId, timestamp: Int64(server.clock.now().timeIntervalSince1970)
            )
            XCTAssertEqual(rotated.status, .ok, "\(rotated.json)")

            // Tokens bound to the old key are refused, and the old key refreshes nothing.
            let oldToken = try await client.whoami(authorization: ["DPoP " + device.accessToken], proofs: [try server.resourceProof(device.key, token: device.accessToken)])
            XCTAssertEqual(oldToken.status, .unauthorized)
            let oldRefresh = try await client.requestToken(body: device.app.refreshForm(device.refreshToken), proofs: [try server.tokenProof(device.key)])
            XCTAssertEqual(oldRefresh.status, .badRequest, "\(oldRefresh.json)")

            // The new key refreshes the same sign-in, and its tokens name the same device.
            let refreshed = try await client.requestToken(body: device.app.refreshForm(device.refreshToken), proofs: [try server.tokenProof(nextKey)])
            XCTAssertEqual(refreshed.status, .ok, "\(refreshed.json)")
            let newToken = try XCTUnwrap(refreshed.json["access_token"]?.stringValue)
            XCTAssertEqual(try UnverifiedJWT(newToken).claims["device_id"]?.stringValue, device.deviceId)
            let whoami = try await client.whoami(authorization: ["DPoP " + newToken], proofs: [try server.resourceProof(nextKey, token: newToken)])
            XCTAssertEqual(whoami.status, .ok)

            // Approvals: the new key approves, the old one cannot.
            var newPhone = oldPhone
            newPhone.key = nextKey
            let (challenge, _) = try await server.createdChallenge()
            let oldAnswer = try await oldPhone.respond(client, token: try await oldPhone.accessToken(client), challengeId: challenge.id)
            XCTAssertNotEqual(oldAnswer.status, .ok, oldAnswer.body)
            let newAnswer = try await newPhone.respond(client, token: try await newPhone.accessToken(client), challengeId: challenge.id)
            XCTAssertEqual(newAnswer.status, .ok, newAnswer.body)
            let listed = try await server.runtime.devices.people.list(realm: "demo", userId: user.id)
            XCTAssertEqual(listed.first?.pushOn, true)
            XCTAssertEqual(listed.first?.tokensHeld, 1)
        }
    }

    /// A key a device rotated away from gets no new sign-in (review finding 1: it was no device's any more, so it
    /// got tokens naming none, and a session left on it kept refreshing).
    func testTheRetiredKeyGetsNothing() async throws {
        try await TestServer.forEachEngine { server, client in
            let device = try await OneDeviceFixture.signedIn(server, client)
            let next = TestInstallation()
            let rotated = try await client.rotate(
                try DeviceSignedRequestTests.rotation(to: next, challenge: try await client.deviceChallenge()), signedBy: device.installation,
                deviceId: device.deviceId, timestamp: Int64(server.clock.now().timeIntervalSince1970)
            )
            XCTAssertEqual(rotated.status, .ok, "\(rotated.json)")
            let fresh = try await device.app.authorize(TestBrowser(client), ["dpop_jkt": try device.key.publicJWK.thumbprint()])
            let refused = try await client.requestToken(body: device.app.tokenForm(code: try XCTUnwrap(fresh.parameter("code"))), proofs: [try server.tokenProof(device.key)])
            XCTAssertEqual(refused.json["error"]?.stringValue, "invalid_grant", "\(refused.json)")
            XCTAssertEqual(refused.json["reason"]?.stringValue, "device_not_usable")
        }
    }

    /// The Keycloak-compatible rotate-key cannot move a registered device's push approvals off its registered key
    /// (a key nothing attested): it is refused with the route to take, and the device key keeps approving.
    func testTheCompatibleRotateKeyLeavesARegisteredDevicesKeyAlone() async throws {
        try await TestServer.forEachEngine { server, client in
            let (_, phone) = try await OneDeviceFixture.signedInWithPush(server, client)
            var jwk = try SigningKey.generate(.es256).publicJWK.requiredMembers
            jwk["alg"] = "ES256"
            let refused = try await phone.call(client, .put, "/device/rotate-key", token: try await phone.accessToken(client), json: ["publicKeyJwk": .object(jwk)])
            XCTAssertEqual(refused.status, .badRequest, refused.body)
            XCTAssertTrue(refused.body.contains("/v1/device/rotate-key"), refused.body)

            let (challenge, _) = try await server.createdChallenge()
            let answered = try await phone.respond(client, token: try await phone.accessToken(client), challengeId: challenge.id)
            XCTAssertEqual(answered.status, .ok, answered.body)
        }
    }
}
