// Tests (issue 32): `requireAttestedDevice` — logins are approved only from devices whose key was attested at the
// realm's level. A StrongBox key registered with Android Key Attestation (a real device's KeyDescription under a
// root this test pins) approves; a phone enrolled by QR code with a software key, or a registered device nothing
// vouched for, cannot; the waiting page names the device and its attestation, the audit the level.
import AttestationTestSupport
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class AttestedApprovalTests: XCTestCase {
    /// A StrongBox-attested Android installation, registered through a device service that pins the forged root,
    /// into the test server's own database.
    private static func strongBoxDevice(_ server: TestServer) async throws -> (TestInstallation, String) {
        try await DeviceAndroidKeyTests.addApp(server, "android-app")
        let now = server.clock.now()
        let forged = try ForgedAndroidAttestation(time: now)
        let service = DeviceAndroidKeyTests.service(server, pinning: forged)
        let installation = TestInstallation()
        let challenge = try await service.challenge(realm: "demo", appId: "android-app").challenge
        let registered = try await service.register(realm: "demo", request: try DeviceAndroidKeyTests.registration(
            installation, appId: "android-app", challenge: challenge, forged: forged, vector: "caiman/sdk36/SB_EC_RKP", time: now
        ), developmentTraffic: false)
        XCTAssertEqual(registered.device.attestationLevel, .hardwareKey)
        return (installation, registered.device.deviceId)
    }

    private static func requireAttested(_ server: TestServer, _ level: String) async throws {
        try await server.settings { try $0.apply("requireAttestedDevice", level) }
    }

    func testOnlyADeviceAttestedAtTheRealmsLevelApprovesAndThePageNamesIt() async throws {
        try await TestServer.forEachEngine { server, client in
            _ = try await server.registerApp()
            let (installation, deviceId) = try await Self.strongBoxDevice(server)
            let android = try await OneDeviceFixture.signIn(server, client, on: installation, deviceId: deviceId)
            let claims = try UnverifiedJWT(android.accessToken).claims
            XCTAssertEqual(claims["device_attestation"]?.stringValue, "android-key")
            XCTAssertEqual(claims["device_level"]?.stringValue, "hardware-key")
            let enabled = try await OneDeviceFixture.enablePush(
                server, client, token: android.accessToken, key: android.key,
                body: ["push_provider_type": .string("log"), "push_provider_id": .string("fcm-token"), "device_label": .string("Pixel 8")]
            )
            XCTAssertEqual(enabled.status, .created, "\(enabled.json)")
            XCTAssertEqual(enabled.json["level"]?.stringValue, "hardware-key")

            let (qrPhone, qrToken) = try await server.enrolledDevice(client, algorithm: .es256)
            let user = try await server.demoUser()
            var androidPhone = try TestDevice(server: server, userId: user.id, algorithm: .es256, deviceId: deviceId, credentialId: deviceId)
            androidPhone.key = android.key
            let androidToken = try await androidPhone.accessToken(client)

            try await Self.requireAttested(server, "hardware-key")
            let browser = TestBrowser(client)
            let afterPassword = try await browser.signIn()
            XCTAssertEqual(afterPassword.location, "/realms/demo/login/push")
            let waiting = try await browser.get("/realms/demo/login/push")
            XCTAssertEqual(waiting.status, .ok)
            XCTAssertTrue(waiting.contains("<li>Pixel 8, StrongBox key</li>"), waiting.html)
            XCTAssertFalse(waiting.contains("enrolled by QR code"), "a phone that may not approve is not named")
            let challengeId = try XCTUnwrap(waiting.field("challengeId"))

            let refused = try await qrPhone.respond(client, token: qrToken, challengeId: challengeId)
            XCTAssertEqual(refused.status, .forbidden, refused.body)
            XCTAssertTrue(refused.body.contains("may not approve"), refused.body)
            let approved = try await androidPhone.respond(client, token: androidToken, challengeId: challengeId)
            XCTAssertEqual(approved.status, .ok, approved.body)
            let done = try await browser.get("/realms/demo/login/push")
            XCTAssertEqual(done.status, .seeOther)
            XCTAssertEqual(done.location, "/realms/demo/account")

            let events = try await server.runtime.audit.events(realm: "demo")
            let accepted = try StrictJSON.parseObject(Array(try XCTUnwrap(events.first { $0.type == .challengeAccepted }).detailsJSON.utf8))
            XCTAssertEqual(accepted["level"]?.stringValue, "hardware-key")
            XCTAssertEqual(accepted["device"]?.stringValue, "Pixel 8, StrongBox key")
            XCTAssertEqual(accepted["registeredDevice"]?.stringValue, deviceId)

            // Off again: the phone enrolled by QR code approves as before.
            try await Self.requireAttested(server, "off")
            let (challenge, _) = try await server.createdChallenge()
            let qrApproved = try await qrPhone.respond(client, token: qrToken, challengeId: challenge.id)
            XCTAssertEqual(qrApproved.status, .ok, qrApproved.body)
        }
    }

    /// A registered device nothing vouched for is not `app-attested`; a person whose devices all fall short is
    /// told so on the push step, and is not signed in with the password alone.
    func testAPersonWithoutAQualifyingDeviceIsToldAndNotSignedIn() async throws {
        try await TestServer.forEachEngine { server, client in
            let unattested = try await OneDeviceFixture.signedIn(server, client)
            let enabled = try await OneDeviceFixture.enablePush(server, client, token: unattested.accessToken, key: unattested.key)
            XCTAssertEqual(enabled.status, .created)
            XCTAssertEqual(enabled.json["level"]?.stringValue, "none")
            _ = try await server.enrolledDevice(client, algorithm: .es256)
            try await Self.requireAttested(server, "app-attested")

            let browser = TestBrowser(client)
            let afterPassword = try await browser.signIn()
            XCTAssertEqual(afterPassword.location, "/realms/demo/login/push", "the person has devices: the push step, not the password alone")
            let step = try await browser.get("/realms/demo/login/push")
            XCTAssertEqual(step.status, .forbidden)
            XCTAssertTrue(step.contains("No device can approve this sign-in"), step.html)
            let account = try await browser.get("/realms/demo/account")
            XCTAssertEqual(account.status, .seeOther, "not signed in")
        }
    }

    func testTheSettingTakesTheLevelsAndNamesWhatItAccepts() throws {
        var settings = PushMFASettings()
        XCTAssertEqual(settings.requireAttestedDevice, .none)
        try settings.apply("requireAttestedDevice", "hardware-key")
        XCTAssertEqual(settings.requireAttestedDevice, .hardwareKey)
        XCTAssertEqual(try PushMFASettings(json: settings.jsonObject).requireAttestedDevice, .hardwareKey)
        try settings.apply("requireAttestedDevice", "off")
        XCTAssertEqual(settings.requireAttestedDevice, .none)
        XCTAssertThrowsError(try settings.apply("requireAttestedDevice", "strongbox")) { error in
            XCTAssertTrue("\(error)".contains("off, app-attested or hardware-key"), "\(error)")
        }
    }
}
