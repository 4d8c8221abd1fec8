// Tests: device-signed requests: time window, replays, signed parts, device status, and key rotation.
import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
import KeywardServer
import XCTest

/// Requests signed by a registered device key: the window, replays, the key, what the signature covers, the
/// device's status; and key rotation, after which only the new key signs.
final class DeviceSignedRequestTests: XCTestCase {
    static let statusPath = "/realms/demo/v1/device/status"
    static let rotatePath = "/realms/demo/v1/device/rotate-key"

    func testASignedRequestIsAcceptedOnceInsideTheWindow() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, missing: .accept)
            let installation = TestInstallation()
            let deviceId = try await client.registeredDevice(installation)
            let now = Int64(server.clock.now().timeIntervalSince1970)
            let headers = try installation.signedHeaders(deviceId: deviceId, method: "GET", target: Self.statusPath, timestamp: now)
            let answer = try await client.deviceStatus(headers: headers)
            XCTAssertEqual(answer.status, .ok, "\(answer.json)")
            XCTAssertEqual(answer.json["device_id"]?.stringValue, deviceId)
            XCTAssertEqual(answer.json["status"]?.stringValue, "registered")
            XCTAssertEqual(answer.json["app_id"]?.stringValue, "ios-app")

            let replay = try await client.deviceStatus(headers: headers)
            XCTAssertEqual(replay.status, .unauthorized)
            XCTAssertEqual(replay.json["error"]?.stringValue, "NONCE_REPLAY")

            for skew in [-301, 301] as [Int64] {
                let skewed = try await client.deviceStatus(headers: try installation.signedHeaders(deviceId: deviceId, method: "GET", target: Self.statusPath, timestamp: now + skew))
                XCTAssertEqual(skewed.status, .unauthorized)
                XCTAssertEqual(skewed.json["error"]?.stringValue, "CLOCK_SKEW", "\(skew): \(skewed.json)")
                XCTAssertEqual(skewed.json["server_timestamp"]?.intValue, now)
            }
            let edge = try await client.deviceStatus(headers: try installation.signedHeaders(deviceId: deviceId, method: "GET", target: Self.statusPath, timestamp: now - 300))
            XCTAssertEqual(edge.status, .ok, "300 s is inside the window: \(edge.json)")
        }
    }

    /// Each part of the signed message is bound: another key, nonce, timestamp, method, path or query fails.
    func testTheSignatureCoversEveryPartOfTheRequest() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, missing: .accept)
            let installation = TestInstallation()
            let deviceId = try await client.registeredDevice(installation)
            let now = Int64(server.clock.now().timeIntervalSince1970)
            let good = try installation.signedHeaders(deviceId: deviceId, method: "GET", target: Self.statusPath, timestamp: now)

            var swappedNonce = good
            swappedNonce[HTTPField.Name("X-Keyward-Nonce")!] = UUID().uuidString
            var shiftedTime = good
            shiftedTime[HTTPField.Name("X-Keyward-Timestamp")!] = String(now - 1)
            let otherKey = try TestInstallation().signedHeaders(deviceId: deviceId, method: "GET", target: Self.statusPath, timestamp: now)
            let otherMethod = try installation.signedHeaders(deviceId: deviceId, method: "POST", target: Self.statusPath, timestamp: now)
            let otherPath = try installation.signedHeaders(deviceId: deviceId, method: "GET", target: Self.rotatePath, timestamp: now)
            for (name, headers, target) in [
                ("nonce swapped", swappedNonce, Self.statusPath), ("timestamp changed", shiftedTime, Self.statusPath),
                ("another key", otherKey, Self.statusPath), ("signed as POST", otherMethod, Self.statusPath),
                ("signed for another path", otherPath, Self.statusPath), ("query added", good, Self.statusPath + "?x=1"),
            ] {
                let answer = try await client.deviceStatus(headers: headers, target: target)
                XCTAssertEqual(answer.status, .unauthorized, name)
                XCTAssertEqual(answer.json["error"]?.stringValue, "INVALID_SIGNATURE", "\(name): \(answer.json)")
            }
            let withQuery = try installation.signedHeaders(deviceId: deviceId, method: "GET", target: Self.statusPath + "?x=1", timestamp: now)
            let queried = try await client.deviceStatus(headers: withQuery, target: Self.statusPath + "?x=1")
            XCTAssertEqual(queried.status, .ok, "the query is signed as sent: \(queried.json)")
            // The refusals spent nothing: the original request still goes through once.
            let answer = try await client.deviceStatus(headers: good)
            XCTAssertEqual(answer.status, .ok, "\(answer.json)")
        }
    }

    func testUnknownDevicesMissingHeadersAndPendingDevicesAreRefused() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, missing: .pending)
            let installation = TestInstallation()
            let deviceId = try await client.registeredDevice(installation)
            let now = Int64(server.clock.now().timeIntervalSince1970)
            let pending = try await client.deviceStatus(headers: try installation.signedHeaders(deviceId: deviceId, method: "GET", target: Self.statusPath, timestamp: now))
            XCTAssertEqual(pending.status, .forbidden)
            XCTAssertEqual(pending.json["error"]?.stringValue, "DEVICE_PENDING")
            let unknown = try await client.deviceStatus(headers: try installation.signedHeaders(deviceId: "no-such-device", method: "GET", target: Self.statusPath, timestamp: now))
            XCTAssertEqual(unknown.json["error"]?.stringValue, "NOT_REGISTERED", "\(unknown.json)")

            let complete = try installation.signedHeaders(deviceId: deviceId, method: "GET", target: Self.statusPath, timestamp: now)
            for header in ["X-App-ID", "X-Device-ID", "X-Keyward-Timestamp", "X-Keyward-Nonce", "X-Keyward-Signature", "X-Keyward-Sig-Version"] {
                var headers = complete
                headers[HTTPField.Name(header)!] = nil
                let answer = try await client.deviceStatus(headers: headers)
                XCTAssertEqual(answer.status, .unauthorized, header)
                XCTAssertEqual(answer.json["error"]?.stringValue, "INVALID_SIGNATURE", header)
                XCTAssertTrue(answer.json["message"]?.stringValue?.contains(header) ?? false, "\(header): \(answer.json)")
            }
            var badVersion = complete
            badVersion[HTTPField.Name("X-Keyward-Sig-Version")!] = "2"
            let version = try await client.deviceStatus(headers: badVersion)
            XCTAssertEqual(version.json["error"]?.stringValue, "INVALID_SIGNATURE")
            var shortNonce = complete
            shortNonce[HTTPField.Name("X-Keyward-Nonce")!] = "abc"
            let nonce = try await client.deviceStatus(headers: shortNonce)
            XCTAssertEqual(nonce.json["error"]?.stringValue, "INVALID_SIGNATURE")
            let assertion = try await client.deviceStatus(headers: complete.merging(["X-Keyward-Sig-Version": "appattest-1"]))
            XCTAssertTrue(assertion.json["message"]?.stringValue?.contains("not registered with App Attest") ?? false, "\(assertion.json)")
        }
    }

    /// A pending device waits for an operator: approved, it signs in; rejected, it is refused and its key stays refused.
    func testAnOperatorDecidesOnPendingDevices() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, missing: .pending)
            let installation = TestInstallation()
            let deviceId = try await client.registeredDevice(installation)
            let now = Int64(server.clock.now().timeIntervalSince1970)
            @Sendable func status() async throws -> JSONAnswer {
                try await client.deviceStatus(headers: try installation.signedHeaders(deviceId: deviceId, method: "GET", target: Self.statusPath, timestamp: now))
            }
            let waiting = try await status()
            XCTAssertEqual(waiting.json["error"]?.stringValue, "DEVICE_PENDING")
            try await server.runtime.devices.apps.decide(realm: "demo", appId: "ios-app", deviceId: deviceId, status: .registered)
            let approved = try await status()
            XCTAssertEqual(approved.status, .ok, "\(approved.json)")
            try await server.runtime.devices.apps.decide(realm: "demo", appId: "ios-app", deviceId: deviceId, status: .rejected)
            let rejected = try await status()
            XCTAssertEqual(rejected.status, .forbidden)
            XCTAssertEqual(rejected.json["error"]?.stringValue, "DEVICE_REVOKED")

            let again = try await client.registerDevice(try installation.registration(appId: "ios-app", challenge: try await client.deviceChallenge()))
            XCTAssertEqual(again.json["code"]?.stringValue, "ALREADY_REGISTERED")
            XCTAssertEqual(again.json["status"]?.stringValue, "rejected", "a rejected key does not come back by registering again")
            do {
                try await server.runtime.devices.apps.decide(realm: "demo", appId: "ios-app", deviceId: "nope", status: .rejected)
                XCTFail("decided on a device that does not exist")
            } catch let error as DeviceAppError {
                XCTAssertTrue(error.description.contains("nope"))
            }
            let events = try await server.runtime.audit.events(realm: "demo").map(\.type)
            XCTAssertTrue(events.contains(.deviceApproved) && events.contains(.deviceRejected))
        }
    }

    func testRotationKeepsTheDeviceAndRetiresTheOldKey() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, missing: .accept)
            let old = TestInstallation()
            let deviceId = try await client.registeredDevice(old)
            let new = TestInstallation()
            let challenge = try await client.deviceChallenge()
            let now = Int64(server.clock.now().timeIntervalSince1970)

            // Without the new key's own signature over the challenge, nothing changes.
            var body = try Self.rotation(to: new, challenge: challenge)
            body["proof"] = .string(Data(try TestInstallation().key.signature(for: Array(challenge.utf8)).derRepresentation).base64EncodedString())
            let unproven = try await client.rotate(body, signedBy: old, deviceId: deviceId, timestamp: now)
            XCTAssertEqual(unproven.status, .badRequest)
            XCTAssertEqual(unproven.json["error"]?.stringValue, "INVALID_PROOF")

            // Signed by the new key instead of the old one: not the device.
            let byNewKey = try await client.rotate(try Self.rotation(to: new, challenge: challenge), signedBy: new, deviceId: deviceId, timestamp: now)
            XCTAssertEqual(byNewKey.json["error"]?.stringValue, "INVALID_SIGNATURE")

            let rotated = try await client.rotate(try Self.rotation(to: new, challenge: challenge), signedBy: old, deviceId: deviceId, timestamp: now)
            XCTAssertEqual(rotated.status, .ok, "\(rotated.json)")
            XCTAssertEqual(rotated.json["device_id"]?.stringValue, deviceId)
            XCTAssertNotNil(rotated.json["key_rotated_at"]?.stringValue)

            let oldKey = try await client.deviceStatus(headers: try old.signedHeaders(deviceId: deviceId, method: "GET", target: Self.statusPath, timestamp: now))
            XCTAssertEqual(oldKey.json["error"]?.stringValue, "INVALID_SIGNATURE", "\(oldKey.json)")
            let newKey = try await client.deviceStatus(headers: try new.signedHeaders(deviceId: deviceId, method: "GET", target: Self.statusPath, timestamp: now))
            XCTAssertEqual(newKey.status, .ok, "\(newKey.json)")

            // The challenge was spent; and a key of another device cannot be taken over.
            let again = try await client.rotate(try Self.rotation(to: TestInstallation(), challenge: challenge), signedBy: new, deviceId: deviceId, timestamp: now)
            XCTAssertEqual(again.json["error"]?.stringValue, "INVALID_CHALLENGE", "\(again.json)")
            let other = TestInstallation()
            _ = try await client.registeredDevice(other)
            let takeover = try await client.rotate(try Self.rotation(to: other, challenge: try await client.deviceChallenge()), signedBy: new, deviceId: deviceId, timestamp: now)
            XCTAssertEqual(takeover.status, .conflict)
            XCTAssertEqual(takeover.json["error"]?.stringValue, "KEY_ALREADY_REGISTERED")
            let events = try await server.runtime.audit.events(realm: "demo").filter { $0.type == .deviceKeyRotated }
            XCTAssertEqual(events.count, 1)
        }
    }

    /// The body is signed: a rotation body altered in transit is refused.
    func testAnAlteredBodyIsRefused() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, missing: .accept)
            let old = TestInstallation()
            let deviceId = try await client.registeredDevice(old)
            let now = Int64(server.clock.now().timeIntervalSince1970)
            let challenge = try await client.deviceChallenge()
            let signedBody = StrictJSON.serialize(try Self.rotation(to: TestInstallation(), challenge: challenge))
            var headers = try old.signedHeaders(deviceId: deviceId, method: "POST", target: Self.rotatePath, body: signedBody, timestamp: now)
            headers[.contentType] = "application/json"
            let swapped = StrictJSON.serialize(try Self.rotation(to: TestInstallation(), challenge: challenge))
            let answer = try await client.postRaw(Self.rotatePath, bytes: swapped, headers: headers)
            XCTAssertEqual(answer.status, .unauthorized)
            XCTAssertEqual(answer.json["error"]?.stringValue, "INVALID_SIGNATURE")
        }
    }

    static func rotation(to new: TestInstallation, challenge: String) throws -> JSONObject {
        [
            "challenge": .string(challenge), "new_public_key": .string(new.publicKeyText),
            "proof": .string(Data(try new.key.signature(for: Array(challenge.utf8)).derRepresentation).base64EncodedString()),
        ]
    }
}

extension TestClientProtocol {
    func rotate(_ body: JSONObject, signedBy installation: TestInstallation, deviceId: String, timestamp: Int64) async throws -> JSONAnswer {
        let bytes = StrictJSON.serialize(body)
        let headers = try installation.signedHeaders(deviceId: deviceId, method: "POST", target: DeviceSignedRequestTests.rotatePath, body: bytes, timestamp: timestamp)
        return try await postRaw(DeviceSignedRequestTests.rotatePath, bytes: bytes, headers: headers)
    }
}

extension HTTPFields {
    func merging(_ other: [String: String]) -> HTTPFields {
        var merged = self
        for (name, value) in other { merged[HTTPField.Name(name)!] = value }
        return merged
    }
}
