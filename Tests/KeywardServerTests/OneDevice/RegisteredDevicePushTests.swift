// Tests (issue 32): push approvals enabled on a registered device's own key, with the person's token bound to it —
// no QR code — then a login approved from it through the Keycloak-compatible device API; and every wrong caller
// refused with a stable code, nothing stored.
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class RegisteredDevicePushTests: XCTestCase {
    func testARegisteredDeviceEnablesPushWithItsOwnKeyAndApprovesALogin() async throws {
        try await TestServer.forEachEngine { server, client in
            let device = try await OneDeviceFixture.signedIn(server, client)
            let enabled = try await OneDeviceFixture.enablePush(
                server, client, token: device.accessToken, key: device.key,
                body: ["push_provider_type": .string("log"), "push_provider_id": .string("push-token-1"), "device_label": .string("Work iPhone")]
            )
            XCTAssertEqual(enabled.status, .created, "\(enabled.json)")
            XCTAssertEqual(enabled.json["device_id"]?.stringValue, device.deviceId)
            XCTAssertEqual(enabled.json["credential_id"]?.stringValue, device.deviceId)
            XCTAssertEqual(enabled.json["level"]?.stringValue, "none")

            let user = try await server.demoUser()
            let stored = try await server.runtime.pushMFA.service.credentials.credentials(realm: "demo", userId: user.id)
            XCTAssertEqual(stored.count, 1)
            XCTAssertEqual(stored.first?.registeredDeviceId, device.deviceId)
            XCTAssertEqual(stored.first?.registeredAppId, DeviceFixture.iosApp)
            XCTAssertEqual(stored.first?.deviceLabel, "Work iPhone")
            XCTAssertEqual(stored.first?.deviceType, "ios")
            let storedKey = try JWK(jsonString: try XCTUnwrap(stored.first?.publicKeyJWK))
            XCTAssertEqual(try storedKey.thumbprint(), try device.key.publicJWK.thumbprint(), "the push credential is the device key")

            // The Keycloak-compatible device API, driven with the same key: the login is approved from the device.
            var phone = try TestDevice(server: server, userId: user.id, algorithm: .es256, deviceId: device.deviceId, credentialId: device.deviceId)
            phone.key = device.key
            let pushToken = try await phone.accessToken(client)
            let (challenge, _) = try await server.createdChallenge()
            let answered = try await phone.respond(client, token: pushToken, challengeId: challenge.id)
            XCTAssertEqual(answered.status, .ok, answered.body)
            let resolved = try await server.runtime.pushMFA.service.challenges.challenge(id: challenge.id, now: server.clock.now())
            XCTAssertEqual(resolved?.status, .approved)

            // Enabling again replaces the credential: one per device.
            let again = try await OneDeviceFixture.enablePush(server, client, token: device.accessToken, key: device.key)
            XCTAssertEqual(again.status, .created)
            let afterAgain = try await server.runtime.pushMFA.service.credentials.credentials(realm: "demo", userId: user.id)
            XCTAssertEqual(afterAgain.count, 1)
        }
    }

    func testWrongCallersAreRefusedWithStableCodesAndNothingIsStored() async throws {
        try await TestServer.forEachEngine { server, client in
            let device = try await OneDeviceFixture.signedIn(server, client)
            let user = try await server.demoUser()
            func nothingStored(_ note: String) async throws {
                let stored = try await server.runtime.pushMFA.service.credentials.credentials(realm: "demo", userId: user.id)
                XCTAssertTrue(stored.isEmpty, note)
            }

            // A proof by another key than the token's: the gate refuses.
            let stranger = try SigningKey.generate(.es256)
            let otherKey = try await OneDeviceFixture.enablePush(server, client, token: device.accessToken, key: stranger)
            XCTAssertEqual(otherKey.status, .unauthorized)
            try await nothingStored("a proof by another key")

            // A token bound to a key that is no registered device's.
            let app = device.app
            let plainAnswer = try await app.authorize(TestBrowser(client), ["dpop_jkt": try stranger.publicJWK.thumbprint()])
            let plain = try await client.requestToken(body: app.tokenForm(code: try XCTUnwrap(plainAnswer.parameter("code"))), proofs: [try server.tokenProof(stranger)])
            let notDevice = try await OneDeviceFixture.enablePush(server, client, token: try XCTUnwrap(plain.json["access_token"]?.stringValue), key: stranger)
            XCTAssertEqual(notDevice.status, .forbidden)
            XCTAssertEqual(notDevice.json["error"]?.stringValue, "NOT_REGISTERED")
            try await nothingStored("a key no device registered")

            // A client's own token (no person) bound to the device key.
            let service = try await client.requestToken(proofs: [try server.tokenProof(device.key)])
            let noPerson = try await OneDeviceFixture.enablePush(server, client, token: try XCTUnwrap(service.json["access_token"]?.stringValue), key: device.key)
            XCTAssertEqual(noPerson.status, .forbidden)
            XCTAssertEqual(noPerson.json["reason"]?.stringValue, "not_a_person")

            // Another person's token, bound to their own device, cannot enable push on this one.
            _ = try await server.runtime.accounts.users.createUser(realm: "demo", username: "other", password: "other-password-1")
            let otherDevice = try await OneDeviceFixture.signedIn(server, client, username: "other", password: "other-password-1", addApp: false)
            let crossed = try await OneDeviceFixture.enablePush(server, client, token: otherDevice.accessToken, key: device.key)
            XCTAssertEqual(crossed.status, .unauthorized, "the token is bound to the other device's key")
            try await nothingStored("another person's token")

            // A replayed proof.
            let proof = try server.resourceProof(device.key, token: device.accessToken, url: OneDeviceFixture.pushURL, method: "POST")
            let first = try await OneDeviceFixture.enablePush(server, client, token: device.accessToken, key: device.key, body: ["push_provider_type": .string("nope-type"), "push_provider_id": .string("x"), "extra": .string("y")], proof: proof)
            XCTAssertEqual(first.status, .badRequest, "\(first.json)")
            XCTAssertEqual(first.json["error"]?.stringValue, "invalid_request")
            let replayed = try await OneDeviceFixture.enablePush(server, client, token: device.accessToken, key: device.key, proof: proof)
            XCTAssertEqual(replayed.status, .unauthorized)
            try await nothingStored("a bad body, then its proof replayed")

            // Bad bodies.
            for body: JSONObject in [["push_provider_type": .string("fcm")], ["device_label": .number(3)], ["push_provider_type": .string(String(repeating: "x", count: 65))]] {
                let refused = try await OneDeviceFixture.enablePush(server, client, token: device.accessToken, key: device.key, body: body)
                XCTAssertEqual(refused.status, .badRequest, "\(body)")
                XCTAssertEqual(refused.json["error"]?.stringValue, "invalid_request")
            }
            try await nothingStored("bad bodies")

            // The device rejected: the gate refuses its token before it expires.
            let rejected = try await server.runtime.devices.store.setStatus(realm: "demo", appId: DeviceFixture.iosApp, deviceId: device.deviceId, to: .rejected)
            XCTAssertTrue(rejected)
            let removed = try await OneDeviceFixture.enablePush(server, client, token: device.accessToken, key: device.key)
            XCTAssertEqual(removed.status, .unauthorized)
            XCTAssertEqual(removed.json["error"]?.stringValue, "invalid_token")
            try await nothingStored("a removed device")
        }
    }

    /// Adding a way to approve logins asks for a recent sign-in, and for the second factor when the person has one
    /// (review finding 6: any token of the device once did).
    func testEnablingAsksForARecentSignInAndTheSecondFactorTheAccountHas() async throws {
        try await TestServer.forEachEngine { server, client in
            let device = try await OneDeviceFixture.signedIn(server, client)
            XCTAssertEqual(try UnverifiedJWT(device.accessToken).claims["acr"]?.stringValue, "urn:keyward:acr:1fa")

            // A phone enrolled by QR code since: the device's sign-in did not pass it.
            _ = try await server.enrolledDevice(client, algorithm: .es256)
            let singleFactor = try await OneDeviceFixture.enablePush(server, client, token: device.accessToken, key: device.key)
            XCTAssertEqual(singleFactor.status, .forbidden, "\(singleFactor.json)")
            XCTAssertEqual(singleFactor.json["reason"]?.stringValue, "second_factor_required")

            // Eleven minutes on, a refreshed token still carries the old sign-in time.
            server.clock.advance(by: 11 * 60)
            let refreshed = try await client.requestToken(body: device.app.refreshForm(device.refreshToken), proofs: [try server.tokenProof(device.key)])
            XCTAssertEqual(refreshed.status, .ok, "\(refreshed.json)")
            let stale = try await OneDeviceFixture.enablePush(server, client, token: try XCTUnwrap(refreshed.json["access_token"]?.stringValue), key: device.key)
            XCTAssertEqual(stale.status, .forbidden, "\(stale.json)")
            XCTAssertEqual(stale.json["reason"]?.stringValue, "sign_in_not_recent")
            let user = try await server.demoUser()
            let stored = try await server.runtime.pushMFA.service.credentials.credentials(realm: "demo", userId: user.id)
            XCTAssertEqual(stored.count, 1, "only the phone enrolled by QR code")
        }
    }

    /// A token bound to the key before the device registered names no device: it must sign in again on it.
    func testATokenIssuedBeforeTheDeviceRegisteredIsNotTheDevices() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, missing: .accept)
            let app = try await server.registerApp()
            let installation = TestInstallation()
            let key = try SigningKey(algorithm: .es256, pem: installation.key.pemRepresentation)
            let answer = try await app.authorize(TestBrowser(client), ["dpop_jkt": try key.publicJWK.thumbprint()])
            let issued = try await client.requestToken(body: app.tokenForm(code: try XCTUnwrap(answer.parameter("code"))), proofs: [try server.tokenProof(key)])
            _ = try await client.registeredDevice(installation)
            let refused = try await OneDeviceFixture.enablePush(server, client, token: try XCTUnwrap(issued.json["access_token"]?.stringValue), key: key)
            XCTAssertEqual(refused.status, .forbidden)
            XCTAssertEqual(refused.json["reason"]?.stringValue, "token_not_for_device")
        }
    }
}
