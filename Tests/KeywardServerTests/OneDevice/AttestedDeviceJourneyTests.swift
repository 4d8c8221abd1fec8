// Tests (issue 32), end to end on both engines: an iPhone installation registered with App Attest (an attestation made
// under a CA the device service pins in place of Apple's, on the server's controlled clock) signs its person in with
// its key as dpop_jkt, turns push approvals on with that key, approves a browser login whose waiting page names
// "App Attest verified" — then is removed, and everything it held is refused, on a second node too.
import AttestationTestSupport
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import NIOCore
import XCTest

final class AttestedDeviceJourneyTests: XCTestCase {
    func testAnAppAttestedInstallationFromRegistrationToRemoval() async throws {
        try await TestServer.forEachEngine { server, client in
            _ = try await server.registerApp()
            try await DeviceAppAttestTests.addApp(server, "ios-app")
            var forged = try ForgedAppAttestation(time: server.clock.now())
            let devices = DeviceAppAttestTests.service(server, pinning: forged)
            let installation = TestInstallation()
            let challenge = try await devices.challenge(realm: "demo", appId: "ios-app").challenge
            let registered = try await devices.register(
                realm: "demo", request: try DeviceAppAttestTests.registration(installation, appId: "ios-app", challenge: challenge, forged: &forged),
                developmentTraffic: false
            )
            XCTAssertEqual(registered.device.attestationLevel, .appAttested)
            let deviceId = registered.device.deviceId

            // Signed in with the device key: the tokens name the device and its attestation.
            let iPhone = try await OneDeviceFixture.signIn(server, client, on: installation, deviceId: deviceId)
            let claims = try UnverifiedJWT(iPhone.accessToken).claims
            XCTAssertEqual(claims["device_id"]?.stringValue, deviceId)
            XCTAssertEqual(claims["device_app"]?.stringValue, "ios-app")
            XCTAssertEqual(claims["device_attestation"]?.stringValue, "app-attest")
            XCTAssertEqual(claims["device_level"]?.stringValue, "app-attested")

            let enabled = try await OneDeviceFixture.enablePush(server, client, token: iPhone.accessToken, key: iPhone.key)
            XCTAssertEqual(enabled.status, .created, "\(enabled.json)")
            XCTAssertEqual(enabled.json["attestation"]?.stringValue, "app-attest")
            XCTAssertEqual(enabled.json["level"]?.stringValue, "app-attested")

            // A browser login, approved on the iPhone; only attested devices may approve.
            try await server.settings { try $0.apply("requireAttestedDevice", "app-attested") }
            let user = try await server.demoUser()
            let phone = try await OneDeviceFixture.phone(server, iPhone)
            let browser = TestBrowser(client)
            let afterPassword = try await browser.signIn()
            XCTAssertEqual(afterPassword.location, "/realms/demo/login/push")
            let waiting = try await browser.get("/realms/demo/login/push")
            XCTAssertTrue(waiting.contains("<li>iPhone, App Attest verified</li>"), waiting.html)
            let loginChallenge = try XCTUnwrap(waiting.field("challengeId"))
            let approved = try await phone.respond(client, token: try await phone.accessToken(client), challengeId: loginChallenge)
            XCTAssertEqual(approved.status, .ok, approved.body)
            let done = try await browser.get("/realms/demo/login/push")
            XCTAssertEqual(done.location, "/realms/demo/account")
            let events = try await server.runtime.audit.events(realm: "demo")
            let accepted = try StrictJSON.parseObject(Array(try XCTUnwrap(events.first { $0.type == .challengeAccepted }).detailsJSON.utf8))
            XCTAssertEqual(accepted["level"]?.stringValue, "app-attested")

            // Removed: a pending login cannot be approved, the refresh token and the access token are refused, on
            // this node and on another.
            let (pending, _) = try await server.createdChallenge(session: "browser-2")
            let pushToken = try await phone.accessToken(client)
            let removed = try await server.runtime.devices.apps.removeDevice(realm: "demo", appId: "ios-app", deviceId: deviceId, userId: user.id)
            XCTAssertNotNil(removed?.removedAt)
            let lateApproval = try await phone.respond(client, token: pushToken, challengeId: pending.id)
            XCTAssertEqual(lateApproval.status, .forbidden, lateApproval.body)
            let refresh = try await client.requestToken(body: iPhone.app.refreshForm(iPhone.refreshToken), proofs: [try server.tokenProof(iPhone.key)])
            XCTAssertEqual(refresh.json["error"]?.stringValue, "invalid_grant")
            let gate = try await client.whoami(authorization: ["DPoP " + iPhone.accessToken], proofs: [try server.resourceProof(iPhone.key, token: iPhone.accessToken)])
            XCTAssertEqual(gate.status, .unauthorized)
            try await server.withSecondNode { _, clientB in
                let onB = try await clientB.whoami(authorization: ["DPoP " + iPhone.accessToken], proofs: [try server.resourceProof(iPhone.key, token: iPhone.accessToken)])
                XCTAssertEqual(onB.status, .unauthorized)
                let refreshOnB = try await clientB.requestToken(body: iPhone.app.refreshForm(iPhone.refreshToken), proofs: [try server.tokenProof(iPhone.key)])
                XCTAssertEqual(refreshOnB.json["error"]?.stringValue, "invalid_grant")
                let approvalOnB = try await phone.respond(clientB, token: pushToken, challengeId: pending.id)
                XCTAssertEqual(approvalOnB.status, .forbidden, approvalOnB.body)
            }
            let stillPending = try await server.runtime.pushMFA.service.challenges.challenge(id: pending.id, now: server.clock.now())
            XCTAssertEqual(stillPending?.status, .pending)
        }
    }

    /// A token issued by another realm, bound to the device key, cannot turn push approvals on in this one.
    func testATokenOfAnotherRealmIsRefused() async throws {
        try await TestServer.forEachEngine { server, client in
            let device = try await OneDeviceFixture.signedIn(server, client)
            _ = try await server.runtime.oauth.realms.createRealm(name: "other")
            _ = try await server.runtime.oauth.clients.createClient(realm: "other", clientId: "svc", secret: "other-secret-1")
            var headers = HTTPFields.form()
            let otherTokenURL = TestServer.publicURL + "/realms/other/protocol/openid-connect/token"
            headers.append(HTTPField(name: .init("DPoP")!, value: try server.tokenProof(device.key, url: otherTokenURL)))
            let issued = try await client.execute(
                uri: "/realms/other/protocol/openid-connect/token", method: .post, headers: headers,
                body: ByteBuffer(string: "grant_type=client_credentials&client_id=svc&client_secret=other-secret-1")
            ) { response in (try? StrictJSON.parseObject(response.body.readableBytesView)) ?? [:] }
            let foreign = try XCTUnwrap(issued["access_token"]?.stringValue, "\(issued)")
            let refused = try await OneDeviceFixture.enablePush(server, client, token: foreign, key: device.key)
            XCTAssertEqual(refused.status, .unauthorized, "\(refused.json)")
            let stored = try await server.runtime.pushMFA.service.credentials.credentials(realm: "demo", userId: try await server.demoUser().id)
            XCTAssertTrue(stored.isEmpty)
        }
    }
}
