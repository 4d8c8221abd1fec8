// Tests: unattested device registrations are bounded per app: pending cap, hourly limit, pending devices expire.
import AttestationTestSupport
import Foundation
@testable import KeywardServer
import XCTest

/// Apps whose policy stores or accepts unattested keys let anyone who knows the app id add a device row; these
/// limits keep that bounded (security review M1): pending devices per app, unattested registrations per app and
/// hour, and a lifetime for pending devices nobody decided on.
final class DeviceRegistrationLimitTests: XCTestCase {
    func testPendingDevicesAreCappedPerApp() async throws {
        try await TestServer.forEachEngine(configure: { $0.devicesPendingLimit = 3 }) { server, client in
            try await DeviceFixture.addApp(server, "reviewed", missing: .pending)
            try await DeviceFixture.addApp(server, "other", missing: .pending)
            var ids: [String] = []
            for _ in 0..<3 {
                let answer = try await client.registerDevice(try TestInstallation().registration(appId: "reviewed", challenge: try await client.deviceChallenge("reviewed")))
                XCTAssertEqual(answer.status, .created, "\(answer.json)")
                ids.append(try XCTUnwrap(answer.json["device_id"]?.stringValue))
            }
            let refused = try await client.registerDevice(try TestInstallation().registration(appId: "reviewed", challenge: try await client.deviceChallenge("reviewed")))
            XCTAssertEqual(refused.status, .tooManyRequests, "\(refused.json)")
            XCTAssertEqual(refused.json["error"]?.stringValue, "TOO_MANY_REGISTRATIONS")
            XCTAssertTrue(refused.json["message"]?.stringValue?.contains("3 devices") ?? false, "\(refused.json)")
            let stored = try await server.runtime.devices.apps.devices(realm: "demo", appId: "reviewed")
            XCTAssertEqual(stored.count, 3)

            let otherApp = try await client.registerDevice(try TestInstallation().registration(appId: "other", challenge: try await client.deviceChallenge("other")))
            XCTAssertEqual(otherApp.status, .created, "another app has its own limit: \(otherApp.json)")

            // A decision frees a place.
            try await server.runtime.devices.apps.decide(realm: "demo", appId: "reviewed", deviceId: ids[0], status: .registered)
            let afterDecision = try await client.registerDevice(try TestInstallation().registration(appId: "reviewed", challenge: try await client.deviceChallenge("reviewed")))
            XCTAssertEqual(afterDecision.status, .created, "\(afterDecision.json)")
        }
    }

    func testUnattestedRegistrationsAreLimitedPerAppAndHour() async throws {
        try await TestServer.forEachEngine(configure: { $0.devicesUnattestedPerHour = 2 }) { server, client in
            try await DeviceFixture.addApp(server, "open", missing: .accept)
            for _ in 0..<2 {
                let answer = try await client.registerDevice(try TestInstallation().registration(appId: "open", challenge: try await client.deviceChallenge("open")))
                XCTAssertEqual(answer.status, .created, "\(answer.json)")
            }
            let installation = TestInstallation()
            let refused = try await client.registerDevice(try installation.registration(appId: "open", challenge: try await client.deviceChallenge("open")))
            XCTAssertEqual(refused.status, .tooManyRequests, "\(refused.json)")
            XCTAssertEqual(refused.json["error"]?.stringValue, "TOO_MANY_REGISTRATIONS")
            let stored = try await server.runtime.devices.apps.devices(realm: "demo", appId: "open")
            XCTAssertEqual(stored.count, 2)

            server.clock.advance(by: 3601)
            let nextHour = try await client.registerDevice(try installation.registration(appId: "open", challenge: try await client.deviceChallenge("open")))
            XCTAssertEqual(nextHour.status, .created, "\(nextHour.json)")
        }
    }

    func testPendingDevicesNobodyDecidedOnAreDeleted() async throws {
        try await TestServer.forEachEngine(configure: { $0.devicesPendingLifetimeDays = 2 }) { server, client in
            try await DeviceFixture.addApp(server, "reviewed", missing: .pending)
            var ids: [String] = []
            for _ in 0..<3 {
                let answer = try await client.registerDevice(try TestInstallation().registration(appId: "reviewed", challenge: try await client.deviceChallenge("reviewed")))
                XCTAssertEqual(answer.status, .created, "\(answer.json)")
                ids.append(try XCTUnwrap(answer.json["device_id"]?.stringValue))
            }
            try await server.runtime.devices.apps.decide(realm: "demo", appId: "reviewed", deviceId: ids[0], status: .registered)
            try await server.runtime.devices.apps.decide(realm: "demo", appId: "reviewed", deviceId: ids[1], status: .rejected)

            server.clock.advance(by: 2 * 86400 - 60)
            let early = try await server.runtime.sweeper.sweepOnce()
            XCTAssertEqual(early.pendingDevices, 0)
            server.clock.advance(by: 120)
            let swept = try await server.runtime.sweeper.sweepOnce()
            XCTAssertEqual(swept.pendingDevices, 1)
            let left = try await server.runtime.devices.apps.devices(realm: "demo", appId: "reviewed")
            XCTAssertEqual(Set(left.map(\.deviceId)), [ids[0], ids[1]], "decided devices stay")
        }
    }

    /// The limits are for keys nothing vouches for: a verified attestation is not counted, a failed one is.
    func testOnlyUnattestedRegistrationsCount() async throws {
        try await TestServer.forEachEngine { server, _ in
            _ = try await server.runtime.devices.apps.add(DeviceAppService.Registration(
                realm: "demo", appId: "ios-app", platform: .ios, environment: .development, teamId: DeviceAppAttestTests.teamId,
                bundleId: DeviceAppAttestTests.bundleId, missingAttestation: .accept, failedAttestation: .pending
            ))
            var forged = try ForgedAppAttestation(time: server.clock.now())
            let service = DeviceAppAttestTests.service(server, pinning: forged, limits: .init(pendingPerApp: 5, pendingLifetime: 86400, unattestedPerHour: 1))
            func register(_ body: (TestInstallation, String) throws -> RegistrationRequest) async throws -> DeviceService.Registration {
                let challenge = try await service.challenge(realm: "demo", appId: "ios-app").challenge
                return try await service.register(realm: "demo", request: try body(TestInstallation(), challenge), developmentTraffic: false)
            }
            let unattested = try await register { try RegistrationRequest(json: try $0.registration(appId: "ios-app", challenge: $1)) }
            XCTAssertEqual(unattested.device.status, .registered)

            // The hour's one unattested registration is used; an attested one still passes, so it was not counted.
            let attested = try await register { try DeviceAppAttestTests.registration($0, appId: "ios-app", challenge: $1, forged: &forged) }
            XCTAssertEqual(attested.device.status, .registered)
            XCTAssertNotNil(attested.device.appAttestKeyId)
            do {
                forged.appID = "OTHERTEAM1.com.example.other"
                _ = try await register { try DeviceAppAttestTests.registration($0, appId: "ios-app", challenge: $1, forged: &forged) }
                XCTFail("a failed attestation is unattested, and the hour's one is used")
            } catch let error as DeviceError {
                XCTAssertEqual(error.code, .tooManyRegistrations, "\(error)")
            }
        }
    }
}
