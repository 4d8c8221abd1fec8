// Tests (issue 32): an app that registered its installation signs the person in with the installation's key as its
// DPoP key; the tokens name the registered device and what vouched for it, the device becomes the person's, and a
// removed device's key gets no token.
import Crypto
import Foundation
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class DeviceBoundSignInTests: XCTestCase {
    func testTokensBoundToARegisteredDeviceKeyNameTheDeviceAndItBecomesThePersons() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, missing: .accept)
            let installation = TestInstallation()
            let deviceId = try await client.registeredDevice(installation)
            let deviceKey = try SigningKey(algorithm: .es256, pem: installation.key.pemRepresentation)
            let app = try await server.registerApp()

            let answer = try await app.authorize(TestBrowser(client), ["dpop_jkt": try deviceKey.publicJWK.thumbprint()])
            let issued = try await client.requestToken(body: app.tokenForm(code: try XCTUnwrap(answer.parameter("code"))), proofs: [try server.tokenProof(deviceKey)])
            XCTAssertEqual(issued.status, .ok, "\(issued.json)")
            let claims = try UnverifiedJWT(try XCTUnwrap(issued.json["access_token"]?.stringValue)).claims
            XCTAssertEqual(claims["device_id"]?.stringValue, deviceId)
            XCTAssertEqual(claims["device_app"]?.stringValue, DeviceFixture.iosApp)
            XCTAssertEqual(claims["device_attestation"]?.stringValue, "none")
            XCTAssertEqual(claims["device_level"]?.stringValue, "none")

            let user = try await server.demoUser()
            let stored = try await server.runtime.devices.store.device(realm: "demo", appId: DeviceFixture.iosApp, deviceId: deviceId)
            XCTAssertEqual(stored?.userId, user.id, "the device is the person's once they signed in on it")
            XCTAssertNotNil(stored?.lastSeenAt)

            // A refresh with the device key names the device again.
            let refreshToken = try XCTUnwrap(issued.json["refresh_token"]?.stringValue)
            let refreshed = try await client.requestToken(body: app.refreshForm(refreshToken), proofs: [try server.tokenProof(deviceKey)])
            XCTAssertEqual(refreshed.status, .ok, "\(refreshed.json)")
            let refreshedClaims = try UnverifiedJWT(try XCTUnwrap(refreshed.json["access_token"]?.stringValue)).claims
            XCTAssertEqual(refreshedClaims["device_id"]?.stringValue, deviceId)

            // Another key is no device's: its tokens name none.
            let otherKey = try SigningKey.generate(.es256)
            let otherAnswer = try await app.authorize(TestBrowser(client), ["dpop_jkt": try otherKey.publicJWK.thumbprint()])
            let other = try await client.requestToken(
                body: app.tokenForm(code: try XCTUnwrap(otherAnswer.parameter("code"))), proofs: [try server.tokenProof(otherKey)]
            )
            XCTAssertEqual(other.status, .ok)
            XCTAssertNil(try UnverifiedJWT(try XCTUnwrap(other.json["access_token"]?.stringValue)).claims["device_id"])

            // Rejected by an operator: the key gets no token, and nothing single-use was spent for it.
            let rejected = try await server.runtime.devices.store.setStatus(realm: "demo", appId: DeviceFixture.iosApp, deviceId: deviceId, to: .rejected)
            XCTAssertTrue(rejected)
            let nextRefresh = try XCTUnwrap(refreshed.json["refresh_token"]?.stringValue)
            let refused = try await client.requestToken(body: app.refreshForm(nextRefresh), proofs: [try server.tokenProof(deviceKey)])
            XCTAssertEqual(refused.status, .badRequest)
            XCTAssertEqual(refused.json["error"]?.stringValue, "invalid_grant")
            XCTAssertTrue(refused.json["error_description"]?.stringValue?.contains(deviceId) ?? false, "\(refused.json)")
            let freshAnswer = try await app.authorize(TestBrowser(client), ["dpop_jkt": try deviceKey.publicJWK.thumbprint()])
            let freshRefused = try await client.requestToken(
                body: app.tokenForm(code: try XCTUnwrap(freshAnswer.parameter("code"))), proofs: [try server.tokenProof(deviceKey)]
            )
            XCTAssertEqual(freshRefused.json["error"]?.stringValue, "invalid_grant")
        }
    }

    func testTheAttestationLevelIsWhatVouchedForTheKey() {
        func device(_ summary: String, attested: Bool = true) -> Device {
            Device(
                realm: "demo", appId: "app", deviceId: "d", publicKey: [], keyThumbprint: "t", platform: .android, status: .registered,
                attestation: summary, attested: attested, appAttestKeyId: nil, appAttestPublicKey: nil, assertionCounter: nil, registeredAt: Date(),
                keyRotatedAt: nil
            )
        }
        XCTAssertEqual(device(#"{"type":"none"}"#, attested: false).attestationLevel, .none)
        XCTAssertEqual(device(#"{"failed":"chain","type":"android-key"}"#, attested: false).attestationLevel, .none)
        XCTAssertEqual(device(#"{"type":"app-attest"}"#).attestationLevel, .appAttested)
        XCTAssertEqual(device(#"{"type":"play-integrity"}"#).attestationLevel, .appAttested)
        XCTAssertEqual(device(#"{"security_level":"SOFTWARE","type":"android-key"}"#).attestationLevel, .appAttested)
        XCTAssertEqual(device(#"{"security_level":"TRUSTED_ENVIRONMENT","type":"android-key"}"#).attestationLevel, .hardwareKey)
        XCTAssertEqual(device(#"{"security_level":"STRONG_BOX","type":"android-key"}"#).attestationLevel, .hardwareKey)
        XCTAssertEqual(
            device(#"{"key_rotated_unattested":true,"security_level":"STRONG_BOX","type":"android-key"}"#).attestationLevel, .appAttested,
            "a key rotated without an attestation is not the key the hardware certified"
        )
        XCTAssertTrue(DeviceAttestationLevel.none < .appAttested && DeviceAttestationLevel.appAttested < .hardwareKey)
        var removed = device(#"{"type":"app-attest"}"#)
        XCTAssertTrue(removed.usable)
        removed.removedAt = Date()
        XCTAssertFalse(removed.usable)
    }
}
