// Tests (issue 32): the account page lists each of the person's devices once — a registered device with its
// attestation, push on or off, last seen and app sign-ins, a phone enrolled by QR code beside it — and removing a
// registered device there ends it as the CLI does.
import Foundation
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class PersonDevicePageTests: XCTestCase {
    func testTheAccountPageListsEachDeviceOnceAndRemovesOne() async throws {
        try await TestServer.forEachEngine { server, client in
            let device = try await OneDeviceFixture.signedIn(server, client)
            let enabled = try await OneDeviceFixture.enablePush(server, client, token: device.accessToken, key: device.key)
            XCTAssertEqual(enabled.status, .created)
            _ = try await server.enrolledDevice(client, algorithm: .es256)

            // The password sign-in goes to the push step; the registered device approves it.
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            let waiting = try await browser.get("/realms/demo/login/push")
            let challengeId = try XCTUnwrap(waiting.field("challengeId"))
            let user = try await server.demoUser()
            var phone = try TestDevice(server: server, userId: user.id, algorithm: .es256, deviceId: device.deviceId, credentialId: device.deviceId)
            phone.key = device.key
            let approved = try await phone.respond(client, token: try await phone.accessToken(client), challengeId: challengeId)
            XCTAssertEqual(approved.status, .ok, approved.body)
            _ = try await browser.get("/realms/demo/login/push")

            let account = try await browser.get("/realms/demo/account")
            XCTAssertEqual(account.status, .ok)
            XCTAssertTrue(account.contains(#"<table id="registered-devices">"#), account.html)
            XCTAssertTrue(account.contains("<td>iPhone · \(DeviceFixture.iosApp)</td><td>not attested</td><td>on</td>"), account.html)
            XCTAssertEqual(account.html.components(separatedBy: "registered-devices/\(DeviceFixture.iosApp)/\(device.deviceId)/remove").count, 2, "one row")
            XCTAssertEqual(account.html.components(separatedBy: "<td>Test phone</td>").count - 1, 1, "the QR phone once")
            XCTAssertFalse(account.contains("<td>iPhone</td>"), "the registered device not again among the phones")
            XCTAssertFalse(account.contains(#"id="no-devices""#))

            let removeAction = "/realms/demo/account/registered-devices/\(DeviceFixture.iosApp)/\(device.deviceId)/remove"
            let csrf = try XCTUnwrap(account.field("csrf"))
            let forged = try await browser.post(removeAction, ["csrf": "wrong"])
            XCTAssertNotEqual(forged.location, "/realms/demo/account?notice=removed")
            let notMine = try await browser.post("/realms/demo/account/registered-devices/\(DeviceFixture.iosApp)/no-such-device/remove", ["csrf": csrf])
            XCTAssertEqual(notMine.status, .notFound)
            let removed = try await browser.post(removeAction, ["csrf": csrf])
            XCTAssertEqual(removed.location, "/realms/demo/account?notice=removed")
            let after = try await browser.get("/realms/demo/account")
            XCTAssertTrue(after.contains("<td>off</td>"), after.html)
            XCTAssertTrue(after.contains("Removed "), after.html)
            let gate = try await client.whoami(authorization: ["DPoP " + device.accessToken], proofs: [try server.resourceProof(device.key, token: device.accessToken)])
            XCTAssertEqual(gate.status, .unauthorized)
        }
    }
}
