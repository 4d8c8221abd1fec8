// Tests (issue 32): removing a device ends at once, on every node, everything its key holds — refreshes, tokens at
// the gate, push approvals, broker hand-offs — and a device racing its own removal gets nothing after the removal
// returned.
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import Synchronization
import XCTest

final class DeviceRemovalTests: XCTestCase {
    /// What the racing calls saw.
    private final class RaceLog: Sendable {
        let removalReturned = Mutex(false)
        let lateSuccesses = Mutex(0)
        let outcomes = Mutex<[HTTPResponse.Status]>([])
    }

    func testRemovingADeviceEndsEverythingItHoldsOnEveryNode() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, phone) = try await OneDeviceFixture.signedInWithPush(server, client)
            let user = try await server.demoUser()
            let pushToken = try await phone.accessToken(client)
            let (challenge, _) = try await server.createdChallenge()

            let before = try await client.whoami(authorization: ["DPoP " + device.accessToken], proofs: [try server.resourceProof(device.key, token: device.accessToken)])
            XCTAssertEqual(before.status, .ok)
            let listed = try await server.runtime.devices.people.list(realm: "demo", userId: user.id)
            XCTAssertEqual(listed.map(\.device.deviceId), [device.deviceId])
            XCTAssertEqual(listed.first?.pushOn, true)
            XCTAssertEqual(listed.first?.tokensHeld, 1)

            let removed = try await server.runtime.devices.apps.removeDevice(realm: "demo", appId: DeviceFixture.iosApp, deviceId: device.deviceId, userId: user.id)
            XCTAssertNotNil(removed?.removedAt)

            // The gate, on this node and another one.
            let gate = try await client.whoami(authorization: ["DPoP " + device.accessToken], proofs: [try server.resourceProof(device.key, token: device.accessToken)])
            XCTAssertEqual(gate.status, .unauthorized)
            XCTAssertTrue(gate.headers[.wwwAuthenticate]?.contains("invalid_token") ?? false, "\(gate.headers)")
            try await server.withSecondNode { _, clientB in
                let onB = try await clientB.whoami(authorization: ["DPoP " + device.accessToken], proofs: [try server.resourceProof(device.key, token: device.accessToken)])
                XCTAssertEqual(onB.status, .unauthorized)
                let refreshOnB = try await clientB.requestToken(body: device.app.refreshForm(device.refreshToken), proofs: [try server.tokenProof(device.key)])
                XCTAssertEqual(refreshOnB.json["error"]?.stringValue, "invalid_grant")
            }
            // The refresh token, the approval and a new enabling.
            let refresh = try await client.requestToken(body: device.app.refreshForm(device.refreshToken), proofs: [try server.tokenProof(device.key)])
            XCTAssertEqual(refresh.json["error"]?.stringValue, "invalid_grant")
            let approval = try await phone.respond(client, token: pushToken, challengeId: challenge.id)
            XCTAssertEqual(approval.status, .forbidden, approval.body)
            let stillPending = try await server.runtime.pushMFA.service.challenges.challenge(id: challenge.id, now: server.clock.now())
            XCTAssertEqual(stillPending?.status, .pending)
            let reEnable = try await OneDeviceFixture.enablePush(server, client, token: device.accessToken, key: device.key)
            XCTAssertEqual(reEnable.status, .unauthorized)

            // What the other parts held is gone, and the list says so.
            let credentials = try await server.runtime.pushMFA.service.credentials.credentials(realm: "demo", userId: user.id)
            XCTAssertTrue(credentials.isEmpty)
            let after = try await server.runtime.devices.people.list(realm: "demo", userId: user.id)
            XCTAssertNotNil(after.first?.device.removedAt)
            XCTAssertEqual(after.first?.pushOn, false)
            XCTAssertEqual(after.first?.tokensHeld, 0)
            let families = try await server.runtime.openID.families.liveFamilies(realm: "demo", userId: user.id, now: server.clock.now())
            XCTAssertTrue(families.allSatisfy { $0.jkt != removed?.keyThumbprint }, "the sessions bound to its key are revoked")

            // Its signed requests are refused, its key cannot register again, and another person cannot remove
            // someone else's device.
            let signed = try await client.deviceStatus(headers: try device.installation.signedHeaders(
                deviceId: device.deviceId, method: "GET", target: "/realms/demo/v1/device/status", timestamp: Int64(server.clock.now().timeIntervalSince1970)
            ))
            XCTAssertEqual(signed.status, .forbidden, "\(signed.json)")
            XCTAssertEqual(signed.json["error"]?.stringValue, "DEVICE_REVOKED")
            let again = try await client.registerDevice(try device.installation.registration(appId: DeviceFixture.iosApp, challenge: try await client.deviceChallenge()))
            XCTAssertEqual(again.status, .forbidden, "\(again.json)")
            XCTAssertEqual(again.json["error"]?.stringValue, "DEVICE_REVOKED")
            let stranger = try await server.runtime.devices.apps.removeDevice(realm: "demo", appId: DeviceFixture.iosApp, deviceId: device.deviceId, userId: "someone-else")
            XCTAssertNil(stranger)
        }
    }

    /// Disabling the person removes the devices they signed in on, with everything their keys hold.
    func testDisablingThePersonRemovesTheirDevices() async throws {
        try await TestServer.forEachEngine { server, client in
            let device = try await OneDeviceFixture.signedIn(server, client)
            let enabled = try await OneDeviceFixture.enablePush(server, client, token: device.accessToken, key: device.key)
            XCTAssertEqual(enabled.status, .created)
            let user = try await server.runtime.accounts.users.disable(realm: "demo", username: "test")
            let stored = try await server.runtime.devices.store.device(realm: "demo", appId: DeviceFixture.iosApp, deviceId: device.deviceId)
            XCTAssertNotNil(stored?.removedAt)
            let gate = try await client.whoami(authorization: ["DPoP " + device.accessToken], proofs: [try server.resourceProof(device.key, token: device.accessToken)])
            XCTAssertEqual(gate.status, .unauthorized)
            let credentials = try await server.runtime.pushMFA.service.credentials.credentials(realm: "demo", userId: user.id)
            XCTAssertTrue(credentials.isEmpty)
            _ = try await server.runtime.accounts.users.enable(realm: "demo", username: "test")
            let afterEnable = try await client.whoami(authorization: ["DPoP " + device.accessToken], proofs: [try server.resourceProof(device.key, token: device.accessToken)])
            XCTAssertEqual(afterEnable.status, .unauthorized, "enabling the account does not bring a removed device back")
        }
    }

    /// 20 calls with the device's token race its removal: none that starts after the removal returned succeeds.
    func testADeviceRacingItsOwnRemovalGetsNothingAfterTheRemovalReturned() async throws {
        try await TestServer.forEachEngine { server, client in
            let device = try await OneDeviceFixture.signedIn(server, client)
            let user = try await server.demoUser()
            let log = RaceLog()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        for _ in 0..<5 {
                            let startedAfterRemoval = log.removalReturned.withLock { $0 }
                            let proof = try server.resourceProof(device.key, token: device.accessToken)
                            let answer = try await client.whoami(authorization: ["DPoP " + device.accessToken], proofs: [proof])
                            log.outcomes.withLock { $0.append(answer.status) }
                            if startedAfterRemoval, answer.status == .ok { log.lateSuccesses.withLock { $0 += 1 } }
                        }
                    }
                }
                group.addTask {
                    try await server.runtime.devices.apps.removeDevice(realm: "demo", appId: DeviceFixture.iosApp, deviceId: device.deviceId, userId: user.id)
                    log.removalReturned.withLock { $0 = true }
                }
                try await group.waitForAll()
            }
            XCTAssertEqual(log.lateSuccesses.withLock { $0 }, 0)
            XCTAssertEqual(log.outcomes.withLock { $0.count }, 100)
            XCTAssertTrue(log.outcomes.withLock { $0 }.allSatisfy { $0 == .ok || $0 == .unauthorized }, "never a 5xx")
            let last = try await client.whoami(authorization: ["DPoP " + device.accessToken], proofs: [try server.resourceProof(device.key, token: device.accessToken)])
            XCTAssertEqual(last.status, .unauthorized)
        }
    }
}
