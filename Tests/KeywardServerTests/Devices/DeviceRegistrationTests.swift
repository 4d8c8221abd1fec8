// Tests: device registration without attestation: challenges, proof of possession, app policy, races, refusals.
import Crypto
import Foundation
import HTTPTypes
import KeywardJOSE
import KeywardServer
import XCTest

/// Registration without attestation: challenges, proof of possession, the app's policy, idempotency, races and
/// development traffic. Every refusal has its stable code and nothing else changes.
final class DeviceRegistrationTests: XCTestCase {
    func testTheChallengeNamesItsLifetimeAndIsTiedToItsApp() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, missing: .accept)
            try await DeviceFixture.addApp(server, "other-app", missing: .accept)
            let answer = try await client.postJSON("/realms/demo/v1/device/challenge", ["app_id": "ios-app"])
            XCTAssertEqual(answer.status, .ok)
            XCTAssertEqual(answer.json["ttl_seconds"]?.intValue, 90)
            let challenge = try XCTUnwrap(answer.json["challenge"]?.stringValue)
            XCTAssertGreaterThanOrEqual(try Base64URL.decode(challenge).count, 32)
            let expiresAt = try XCTUnwrap(answer.json["expires_at"]?.stringValue)
            XCTAssertEqual(try Date(expiresAt, strategy: .iso8601).timeIntervalSince1970, (server.clock.now().timeIntervalSince1970 + 90).rounded(.down), accuracy: 1)

            let installation = TestInstallation()
            let elsewhere = try await client.registerDevice(try installation.registration(appId: "other-app", challenge: challenge))
            XCTAssertEqual(elsewhere.status, .badRequest)
            XCTAssertEqual(elsewhere.json["error"]?.stringValue, "INVALID_CHALLENGE")

            let unknownApp = try await client.postJSON("/realms/demo/v1/device/challenge", ["app_id": "no-such-app"])
            XCTAssertEqual(unknownApp.status, .notFound)
            XCTAssertEqual(unknownApp.json["error"]?.stringValue, "NOT_CONFIGURED")
            let unknownRealm = try await client.postJSON("/realms/nowhere/v1/device/challenge", ["app_id": "ios-app"])
            XCTAssertEqual(unknownRealm.status, .notFound)
            XCTAssertEqual(unknownRealm.json["error"]?.stringValue, "realm_not_found")
        }
    }

    func testAChallengeIsSpentOnceAndExpires() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, missing: .accept)
            let challenge = try await client.deviceChallenge()
            let first = try await client.registerDevice(try TestInstallation().registration(appId: "ios-app", challenge: challenge))
            XCTAssertEqual(first.status, .created, "\(first.json)")
            let again = try await client.registerDevice(try TestInstallation().registration(appId: "ios-app", challenge: challenge))
            XCTAssertEqual(again.status, .badRequest)
            XCTAssertEqual(again.json["error"]?.stringValue, "INVALID_CHALLENGE")
            XCTAssertTrue(again.json["message"]?.stringValue?.contains("used already") ?? false, "\(again.json)")

            let late = try await client.deviceChallenge()
            server.clock.advance(by: 91)
            let expired = try await client.registerDevice(try TestInstallation().registration(appId: "ios-app", challenge: late))
            XCTAssertEqual(expired.json["error"]?.stringValue, "CHALLENGE_EXPIRED", "\(expired.json)")

            var forged = try Base64URL.decode(try await client.deviceChallenge())
            forged[5] ^= 1
            let tampered = try await client.registerDevice(try TestInstallation().registration(appId: "ios-app", challenge: Base64URL.encode(forged)))
            XCTAssertEqual(tampered.json["error"]?.stringValue, "INVALID_CHALLENGE", "\(tampered.json)")
            let garbage = try await client.registerDevice(try TestInstallation().registration(appId: "ios-app", challenge: "not-a-challenge"))
            XCTAssertEqual(garbage.json["error"]?.stringValue, "INVALID_CHALLENGE", "\(garbage.json)")
            let stored = try await server.runtime.devices.apps.devices(realm: "demo", appId: "ios-app")
            XCTAssertEqual(stored.count, 1)
        }
    }

    /// A proof by another key, or over other bytes, is refused without spending the challenge.
    func testPossessionOfTheKeyIsProvenBeforeTheChallengeIsSpent() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, missing: .accept)
            let challenge = try await client.deviceChallenge()
            let installation = TestInstallation()
            var body = try installation.registration(appId: "ios-app", challenge: challenge)

            body["proof"] = .string(Data(try P256.Signing.PrivateKey().signature(for: Array(challenge.utf8)).derRepresentation).base64EncodedString())
            let otherKey = try await client.registerDevice(body)
            XCTAssertEqual(otherKey.status, .badRequest)
            XCTAssertEqual(otherKey.json["error"]?.stringValue, "INVALID_PROOF")

            body["proof"] = .string(Data(try installation.key.signature(for: Array("something else".utf8)).rawRepresentation).base64EncodedString())
            let otherBytes = try await client.registerDevice(body)
            XCTAssertEqual(otherBytes.json["error"]?.stringValue, "INVALID_PROOF")

            var badKey = try installation.registration(appId: "ios-app", challenge: challenge)
            badKey["public_key"] = .string(Data([0x04] + [UInt8](repeating: 7, count: 64)).base64EncodedString())
            let offCurve = try await client.registerDevice(badKey)
            XCTAssertEqual(offCurve.json["error"]?.stringValue, "INVALID_PUBLIC_KEY", "\(offCurve.json)")
            badKey["public_key"] = .string(Data([0x02] + [UInt8](repeating: 7, count: 32)).base64EncodedString())
            let compressed = try await client.registerDevice(badKey)
            XCTAssertEqual(compressed.json["error"]?.stringValue, "INVALID_PUBLIC_KEY", "\(compressed.json)")

            // Raw r‖s proofs are accepted too, and the challenge is still unspent.
            body["proof"] = .string(Data(try installation.key.signature(for: Array(challenge.utf8)).rawRepresentation).base64EncodedString())
            let proven = try await client.registerDevice(body)
            XCTAssertEqual(proven.status, .created, "\(proven.json)")
        }
    }

    func testWithoutAttestationTheAppPolicyDecides() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, "strict", missing: .reject)
            try await DeviceFixture.addApp(server, "reviewed", missing: .pending)
            try await DeviceFixture.addApp(server, "open", missing: .accept)
            let refused = try await client.registerDevice(try TestInstallation().registration(appId: "strict", challenge: try await client.deviceChallenge("strict")))
            XCTAssertEqual(refused.status, .badRequest)
            XCTAssertEqual(refused.json["error"]?.stringValue, "ATTESTATION_UNAVAILABLE")
            let pending = try await client.registerDevice(try TestInstallation().registration(appId: "reviewed", challenge: try await client.deviceChallenge("reviewed")))
            XCTAssertEqual(pending.status, .created)
            XCTAssertEqual(pending.json["status"]?.stringValue, "pending")
            let open = try await client.registerDevice(try TestInstallation().registration(appId: "open", challenge: try await client.deviceChallenge("open")))
            XCTAssertEqual(open.status, .created)
            XCTAssertEqual(open.json["status"]?.stringValue, "registered")
            XCTAssertNotNil(open.json["device_id"]?.stringValue)

            let strict = try await server.runtime.devices.apps.devices(realm: "demo", appId: "strict")
            XCTAssertEqual(strict.count, 0)
            let stored = try await server.runtime.devices.apps.devices(realm: "demo", appId: "open")
            XCTAssertEqual(stored.map(\.status), [.registered])
            XCTAssertEqual(stored.first?.attestation, #"{"type":"none"}"#)
        }
    }

    func testTheSameKeyRegistersOnceAndADeviceIdKeepsItsKey() async throws {
        try await TestServer.forEachEngine { server, client in
            // 0.4 ms before a whole second: the stored milliseconds round up into the next second. The first answer
            // must give the registration time as stored (a CI run saw …:56Z first and …:57Z when read back).
            server.clock.set(Date(timeIntervalSince1970: (Date().timeIntervalSince1970.rounded(.down)) + 0.9996))
            try await DeviceFixture.addApp(server, missing: .accept)
            let installation = TestInstallation()
            let first = try await client.registerDevice(try installation.registration(appId: "ios-app", challenge: try await client.deviceChallenge(), deviceId: "phone-1"))
            XCTAssertEqual(first.status, .created, "\(first.json)")
            XCTAssertEqual(first.json["device_id"]?.stringValue, "phone-1")
            XCTAssertNil(first.json["code"])

            let again = try await client.registerDevice(try installation.registration(appId: "ios-app", challenge: try await client.deviceChallenge()))
            XCTAssertEqual(again.status, .ok, "\(again.json)")
            XCTAssertEqual(again.json["code"]?.stringValue, "ALREADY_REGISTERED")
            XCTAssertEqual(again.json["device_id"]?.stringValue, "phone-1")
            XCTAssertEqual(again.json["registered_at"]?.stringValue, first.json["registered_at"]?.stringValue)

            let renamed = try await client.registerDevice(try installation.registration(appId: "ios-app", challenge: try await client.deviceChallenge(), deviceId: "phone-2"))
            XCTAssertEqual(renamed.status, .conflict)
            XCTAssertEqual(renamed.json["error"]?.stringValue, "KEY_ALREADY_REGISTERED")

            let hijack = try await client.registerDevice(try TestInstallation().registration(appId: "ios-app", challenge: try await client.deviceChallenge(), deviceId: "phone-1"))
            XCTAssertEqual(hijack.status, .conflict)
            XCTAssertEqual(hijack.json["error"]?.stringValue, "DEVICE_ID_TAKEN")
            let devices = try await server.runtime.devices.apps.devices(realm: "demo", appId: "ios-app")
            XCTAssertEqual(devices.map(\.deviceId), ["phone-1"])
            XCTAssertEqual(devices.first?.publicKey, Array(installation.key.publicKey.x963Representation))
        }
    }

    /// The challenge is spent in one atomic statement: of several registrations racing with one challenge,
    /// exactly one gets through.
    func testConcurrentRegistrationsWithOneChallengeLetExactlyOneThrough() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, missing: .accept)
            let challenge = try await client.deviceChallenge()
            let bodies = try (0..<8).map { _ in try TestInstallation().registration(appId: "ios-app", challenge: challenge) }
            let statuses = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                for body in bodies {
                    group.addTask {
                        let answer = try await client.registerDevice(body)
                        return (answer.status, answer.json["error"]?.stringValue)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(statuses.filter { $0.0 == .created }.count, 1, "\(statuses)")
            XCTAssertEqual(statuses.filter { $0.1 == "INVALID_CHALLENGE" }.count, 7, "\(statuses)")
            let stored = try await server.runtime.devices.apps.devices(realm: "demo", appId: "ios-app")
            XCTAssertEqual(stored.count, 1)
        }
    }

    func testDevelopmentTrafficOnlyWhereTheAppAllowsIt() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, "prod-app", environment: .production)
            try await DeviceFixture.addApp(server, "dev-app", environment: .development)
            try await DeviceFixture.addApp(server, "qa-app", environment: .development, devBypass: true)
            let dev: HTTPFields = [HTTPField.Name("X-Keyward-Dev-Mode")!: "true"]
            let synheart: HTTPFields = [HTTPField.Name("X-Synheart-Dev-Mode")!: "true"]

            for (app, headers) in [("prod-app", dev), ("prod-app", synheart), ("dev-app", dev)] {
                let answer = try await client.registerDevice(try TestInstallation().registration(appId: app, challenge: try await client.deviceChallenge(app)), headers: headers)
                XCTAssertEqual(answer.status, .forbidden, "\(app): \(answer.json)")
                XCTAssertEqual(answer.json["error"]?.stringValue, "DEV_MODE_REFUSED")
            }
            // One row per app a minute (the second refusal for prod-app is folded into the next row's count).
            let events = try await server.runtime.audit.events(realm: "demo").filter { $0.type == .devModeRefused }
            XCTAssertEqual(events.count, 2)
            XCTAssertEqual(Set(events.compactMap { (try? StrictJSON.parseObject(Array($0.detailsJSON.utf8)))?["app_id"]?.stringValue }), ["prod-app", "dev-app"])

            let bypassed = try await client.registerDevice(try TestInstallation().registration(appId: "qa-app", challenge: try await client.deviceChallenge("qa-app")), headers: dev)
            XCTAssertEqual(bypassed.status, .created, "\(bypassed.json)")
            XCTAssertEqual(bypassed.json["status"]?.stringValue, "registered")
            let withoutHeader = try await client.registerDevice(try TestInstallation().registration(appId: "qa-app", challenge: try await client.deviceChallenge("qa-app")))
            XCTAssertEqual(withoutHeader.json["error"]?.stringValue, "ATTESTATION_UNAVAILABLE", "the bypass needs the header: \(withoutHeader.json)")
            let off = try await client.registerDevice(
                try TestInstallation().registration(appId: "prod-app", challenge: try await client.deviceChallenge("prod-app")),
                headers: [HTTPField.Name("X-Keyward-Dev-Mode")!: "false"]
            )
            XCTAssertEqual(off.json["error"]?.stringValue, "ATTESTATION_UNAVAILABLE", "\"false\" is not development traffic: \(off.json)")
        }
    }

    func testMalformedRequestsGetAStableCodeAndNever500() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, missing: .accept)
            let challenge = try await client.deviceChallenge()
            let good = try TestInstallation().registration(appId: "ios-app", challenge: challenge)
            var cases: [(String, JSONObject)] = []
            for member in ["app_id", "challenge", "public_key", "platform", "proof"] {
                var body = good
                body[member] = nil
                cases.append(("missing \(member)", body))
                body[member] = .number(1)
                cases.append(("numeric \(member)", body))
            }
            cases.append(("platform windows", good.merging(["platform": "windows"]) { $1 }))
            cases.append(("android platform for an ios app", good.merging(["platform": "android"]) { $1 }))
            cases.append(("device id with a slash", good.merging(["device_id": "a/b"]) { $1 }))
            cases.append(("attestation of unknown type", good.merging(["attestation": .object(["type": "tpm"])]) { $1 }))
            cases.append(("attestation not an object", good.merging(["attestation": "app-attest"]) { $1 }))
            cases.append(("android chain not an array", good.merging(["attestation": .object(["type": "android-key", "chain": "x"])]) { $1 }))
            cases.append(("app attest without keyId", good.merging(["attestation": .object(["type": "app-attest", "object": "AA"])]) { $1 }))
            cases.append(("proof not base64", good.merging(["proof": "***"]) { $1 }))
            cases.append(("oversize public key", good.merging(["public_key": .string(String(repeating: "A", count: 500))]) { $1 }))
            for (name, body) in cases {
                let answer = try await client.registerDevice(body)
                XCTAssertEqual(answer.status.code / 100, 4, "\(name): \(answer.status) \(answer.json)")
                XCTAssertNotNil(answer.json["error"]?.stringValue, name)
                XCTAssertFalse(answer.json["message"]?.stringValue?.isEmpty ?? true, name)
            }
            let notJSON = try await client.postRaw("/realms/demo/v1/device/register", bytes: Array("{\"app_id\":".utf8))
            XCTAssertEqual(notJSON.json["error"]?.stringValue, "invalid_request")
            let wrongType = try await client.postRaw("/realms/demo/v1/device/register", bytes: StrictJSON.serialize(good), contentType: "text/plain")
            XCTAssertEqual(wrongType.status, .unsupportedMediaType)
            let duplicate = try await client.postRaw("/realms/demo/v1/device/challenge", bytes: Array(#"{"app_id":"ios-app","app_id":"x"}"#.utf8))
            XCTAssertEqual(duplicate.json["error"]?.stringValue, "invalid_request", "\(duplicate.json)")
            // The challenge survived every refusal above: none got as far as spending it.
            let registered = try await client.registerDevice(good)
            XCTAssertEqual(registered.status, .created, "\(registered.json)")
        }
    }

    /// Security review H2: refusals that cost their sender nothing write at most one audit row per app and reason a
    /// minute, the next one carrying how many were folded.
    func testRefusalsDoNotGrowTheAuditLogAtTheSendersWill() async throws {
        try await TestServer.forEachEngine { server, client in
            try await DeviceFixture.addApp(server, "prod-app", environment: .production)
            let dev: HTTPFields = [HTTPField.Name("X-Keyward-Dev-Mode")!: "1"]
            let body = try TestInstallation().registration(appId: "prod-app", challenge: "anything")
            for _ in 0..<40 {
                let answer = try await client.registerDevice(body, headers: dev)
                XCTAssertEqual(answer.json["error"]?.stringValue, "DEV_MODE_REFUSED")
            }
            var events = try await server.runtime.audit.events(realm: "demo").filter { $0.type == .devModeRefused }
            XCTAssertEqual(events.count, 1, "40 refusals wrote \(events.count) rows")
            server.clock.advance(by: 61)
            _ = try await client.registerDevice(body, headers: dev)
            events = try await server.runtime.audit.events(realm: "demo").filter { $0.type == .devModeRefused }
            XCTAssertEqual(events.count, 2)
            XCTAssertTrue(events.contains { $0.detailsJSON.contains("\"suppressed\":\"39\"") }, "\(events.map(\.detailsJSON))")
        }
    }
}
