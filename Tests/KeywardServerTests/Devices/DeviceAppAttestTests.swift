// Tests: device registration with App Attest, and requests signed with its assertions whose counter must grow.
import AttestationTestSupport
import Crypto
import Foundation
import HTTPTypes
import KeywardAttestation
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// Registration with App Attest and requests signed with its assertions. Real attestations cannot carry this
/// server's challenge, so the attestations here are made in the test under a CA the service pins in place of
/// Apple's (ForgedAppAttestation); the same objects through the real service are refused at the chain.
final class DeviceAppAttestTests: XCTestCase {
    static let teamId = "6MURL8TA57"
    static let bundleId = "de.vincent-haupert.apple-appattest-poc"

    /// The device service with the forged CA pinned as App Attest root, on the server's database and clock.
    static func service(_ server: TestServer, pinning forged: ForgedAppAttestation, limits: DeviceService.Limits = .default) -> DeviceService {
        let runtime = server.runtime
        return DeviceService(
            store: SQLDeviceStore(database: runtime.database), singleUse: runtime.singleUse,
            challengeKey: SymmetricKey(size: .bits256),
            attestations: PlatformAttestationVerifier(appleRoots: PinnedRoots([forged.ca])),
            audit: runtime.audit, metrics: runtime.metrics, clock: server.clock, limits: limits
        )
    }

    static func addApp(_ server: TestServer, _ appId: String, environment: DeviceApp.Environment = .development, failed: DeviceApp.AttestationPolicy = .reject) async throws {
        _ = try await server.runtime.devices.apps.add(DeviceAppService.Registration(
            realm: "demo", appId: appId, platform: .ios, environment: environment, teamId: teamId, bundleId: bundleId, failedAttestation: failed
        ))
    }

    /// A registration body carrying `forged`'s attestation, made for this challenge and key in `form`.
    static func registration(
        _ installation: TestInstallation, appId: String, challenge: String, forged: inout ForgedAppAttestation,
        form: BindingNonce.AppAttestForm = .keyward
    ) throws -> RegistrationRequest {
        forged.clientDataHash = BindingNonce(challenge: challenge, publicKey: installation.publicKeyText).clientDataHash(form)
        let attestation: JSONObject = [
            "type": "app-attest", "keyId": .string(Data(forged.keyID).base64EncodedString()),
            "object": .string(Data(try forged.object()).base64EncodedString()),
        ]
        return try RegistrationRequest(json: try installation.registration(appId: appId, challenge: challenge, extra: ["attestation": .object(attestation)]))
    }

    func testAnAttestedKeyRegistersInEitherBindingFormAndOnlyUnderThePinnedRoot() async throws {
        try await TestServer.forEachEngine { server, client in
            try await Self.addApp(server, "ios-app")
            for form in BindingNonce.AppAttestForm.allCases {
                var forged = try ForgedAppAttestation(time: server.clock.now())
                let service = Self.service(server, pinning: forged)
                let installation = TestInstallation()
                let challenge = try await service.challenge(realm: "demo", appId: "ios-app").challenge
                let request = try Self.registration(installation, appId: "ios-app", challenge: challenge, forged: &forged, form: form)
                let registered = try await service.register(realm: "demo", request: request, developmentTraffic: false)
                XCTAssertEqual(registered.device.status, .registered)
                XCTAssertEqual(registered.device.appAttestKeyId, Data(forged.keyID).base64EncodedString())
                XCTAssertEqual(registered.device.appAttestPublicKey, Array(forged.credentialKey.publicKey.x963Representation))
                XCTAssertEqual(registered.device.assertionCounter, 0)
                let summary = try StrictJSON.parseObject(Array(registered.device.attestation.utf8))
                XCTAssertEqual(summary["binding"]?.stringValue, form.rawValue)
                XCTAssertEqual(summary["type"]?.stringValue, "app-attest")
            }

            // The same kind of object through the running server, which pins Apple's root only.
            var forged = try ForgedAppAttestation(time: server.clock.now())
            let installation = TestInstallation()
            let challenge = try await client.deviceChallenge()
            let body = try installation.registration(appId: "ios-app", challenge: challenge, extra: ["attestation": .object([
                "type": "app-attest", "keyId": .string(Data(forged.keyID).base64EncodedString()),
                "object": .string(Data(try { forged.clientDataHash = BindingNonce(challenge: challenge, publicKey: installation.publicKeyText).digest; return try forged.object() }()).base64EncodedString()),
            ])])
            let refused = try await client.registerDevice(body)
            XCTAssertEqual(refused.status, .badRequest)
            XCTAssertEqual(refused.json["error"]?.stringValue, "INVALID_ATTESTATION")
            XCTAssertEqual(refused.json["reason"]?.stringValue, "CHAIN_INVALID", "\(refused.json)")
        }
    }

    func testAnAttestationForAnotherChallengeOrEnvironmentFollowsTheFailedPolicy() async throws {
        try await TestServer.forEachEngine { server, _ in
            try await Self.addApp(server, "strict")
            try await Self.addApp(server, "prod-app", environment: .production)
            try await Self.addApp(server, "reviewed", failed: .pending)
            var forged = try ForgedAppAttestation(time: server.clock.now())
            let service = Self.service(server, pinning: forged)

            /// An attestation made for one challenge, sent with another.
            func crossed(_ appId: String) async throws -> RegistrationRequest {
                let installation = TestInstallation()
                let attested = try await service.challenge(realm: "demo", appId: appId).challenge
                let sent = try await service.challenge(realm: "demo", appId: appId).challenge
                _ = try Self.registration(installation, appId: appId, challenge: attested, forged: &forged)
                return try RegistrationRequest(json: try installation.registration(appId: appId, challenge: sent, extra: [
                    "attestation": .object(["type": "app-attest", "keyId": .string(Data(forged.keyID).base64EncodedString()),
                                            "object": .string(Data(try forged.object()).base64EncodedString())]),
                ]))
            }
            await Self.assertRefused(service, try await crossed("strict"), code: "INVALID_ATTESTATION", reason: "NONCE_MISMATCH")

            let production = try Self.registration(
                TestInstallation(), appId: "prod-app", challenge: try await service.challenge(realm: "demo", appId: "prod-app").challenge, forged: &forged
            )
            await Self.assertRefused(service, production, code: "INVALID_ATTESTATION", reason: "AAGUID_MISMATCH")

            let pending = try await service.register(realm: "demo", request: try await crossed("reviewed"), developmentTraffic: false)
            XCTAssertEqual(pending.device.status, .pending)
            XCTAssertEqual(try StrictJSON.parseObject(Array(pending.device.attestation.utf8))["failed"]?.stringValue, "NONCE_MISMATCH")
            XCTAssertNil(pending.device.appAttestKeyId, "a failed attestation's key is not stored")
            let refusals = try await server.runtime.audit.events(realm: "demo").filter { $0.type == .deviceRegistrationRefused }
            XCTAssertEqual(refusals.count, 2)
        }
    }

    /// Requests signed with App Attest assertions: the counter must grow, and is advanced by compare-and-set.
    func testAssertionSignedRequestsNeedAGrowingCounter() async throws {
        try await TestServer.forEachEngine { server, client in
            try await Self.addApp(server, DeviceFixture.iosApp)
            var forged = try ForgedAppAttestation(time: server.clock.now())
            let service = Self.service(server, pinning: forged)
            let installation = TestInstallation()
            let challenge = try await service.challenge(realm: "demo", appId: DeviceFixture.iosApp).challenge
            let request = try Self.registration(installation, appId: DeviceFixture.iosApp, challenge: challenge, forged: &forged)
            let deviceId = try await service.register(realm: "demo", request: request, developmentTraffic: false).device.deviceId
            let now = Int64(server.clock.now().timeIntervalSince1970)
            let attested = forged

            @Sendable func call(counter: UInt32) async throws -> JSONAnswer {
                try await client.deviceStatus(headers: try Self.assertionHeaders(attested, deviceId: deviceId, counter: counter, timestamp: now))
            }
            let first = try await call(counter: 1)
            XCTAssertEqual(first.status, .ok, "\(first.json)")
            let same = try await call(counter: 1)
            XCTAssertEqual(same.status, .unauthorized)
            XCTAssertEqual(same.json["reason"]?.stringValue, "COUNTER_NOT_INCREASING", "\(same.json)")
            let seven = try await call(counter: 7)
            XCTAssertEqual(seven.status, .ok, "\(seven.json)")
            let back = try await call(counter: 5)
            XCTAssertEqual(back.json["reason"]?.stringValue, "COUNTER_NOT_INCREASING")

            // Two requests racing with one counter: exactly one advances it.
            let racing = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<2 { group.addTask { try await call(counter: 9).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(racing.filter { $0 == .ok }.count, 1, "\(racing)")

            var forgedByOtherKey = try ForgedAppAttestation(time: server.clock.now())
            forgedByOtherKey.appID = forged.appID
            let otherKey = try await client.deviceStatus(headers: try Self.assertionHeaders(forgedByOtherKey, deviceId: deviceId, counter: 20, timestamp: now))
            XCTAssertEqual(otherKey.json["error"]?.stringValue, "INVALID_SIGNATURE")
            XCTAssertEqual(otherKey.json["reason"]?.stringValue, "SIGNATURE_INVALID", "\(otherKey.json)")
        }
    }

    /// Security review L2: a refused assertion is answered with its reason code only; the verifier's detail (the app's
    /// `TEAMID.bundle.id`, the stored counter) goes to the audit log, not to whoever sent the request.
    func testARefusedAssertionAnswersItsReasonAndLogsTheDetail() async throws {
        try await TestServer.forEachEngine { server, client in
            try await Self.addApp(server, DeviceFixture.iosApp)
            var forged = try ForgedAppAttestation(time: server.clock.now())
            let service = Self.service(server, pinning: forged)
            let challenge = try await service.challenge(realm: "demo", appId: DeviceFixture.iosApp).challenge
            let request = try Self.registration(TestInstallation(), appId: DeviceFixture.iosApp, challenge: challenge, forged: &forged)
            let deviceId = try await service.register(realm: "demo", request: request, developmentTraffic: false).device.deviceId
            let now = Int64(server.clock.now().timeIntervalSince1970)
            let accepted = try await client.deviceStatus(headers: try Self.assertionHeaders(forged, deviceId: deviceId, counter: 41, timestamp: now))
            XCTAssertEqual(accepted.status, .ok, "\(accepted.json)")

            var otherApp = forged
            otherApp.appID = "ABCDE12345.com.example.other"
            let refusals: [(String, String, HTTPFields)] = [
                ("a counter that does not grow", "COUNTER_NOT_INCREASING", try Self.assertionHeaders(forged, deviceId: deviceId, counter: 41, timestamp: now)),
                ("another app's rpIdHash", "RP_ID_MISMATCH", try Self.assertionHeaders(otherApp, deviceId: deviceId, counter: 50, timestamp: now)),
            ]
            for (name, reason, headers) in refusals {
                let refused = try await client.deviceStatus(headers: headers)
                XCTAssertEqual(refused.status, .unauthorized, name)
                XCTAssertEqual(refused.json["reason"]?.stringValue, reason, "\(name): \(refused.json)")
                let body = String(decoding: StrictJSON.serialize(refused.json), as: UTF8.self)
                for secret in [Self.teamId, Self.bundleId, "ABCDE12345"] {
                    XCTAssertFalse(body.contains(secret), "\(name): the answer names '\(secret)': \(body)")
                }
                let message = try XCTUnwrap(refused.json["message"]?.stringValue, "\(refused.json)")
                XCTAssertFalse(message.contains("41"), "\(name): the answer names the stored counter: \(message)")
            }
            let logged = try await server.runtime.audit.events(realm: "demo").filter { $0.type == .deviceRequestRefused }
            let details = try logged.map { try StrictJSON.parseObject(Array($0.detailsJSON.utf8)) }
            XCTAssertEqual(Set(details.compactMap { $0["reason"]?.stringValue }), ["COUNTER_NOT_INCREASING", "RP_ID_MISMATCH"], "\(logged)")
            XCTAssertTrue(details.contains { $0["detail"]?.stringValue?.contains("41") ?? false }, "the stored counter is in the audit detail: \(logged)")
        }
    }

    /// A device registered through App Attest proves the genuine app with every request: a request signed with the
    /// plain device key (version 1) is refused; rotating the device key is still signed by that key.
    func testADeviceRegisteredWithAppAttestSignsWithAssertions() async throws {
        try await TestServer.forEachEngine { server, client in
            try await Self.addApp(server, DeviceFixture.iosApp)
            var forged = try ForgedAppAttestation(time: server.clock.now())
            let service = Self.service(server, pinning: forged)
            let installation = TestInstallation()
            let challenge = try await service.challenge(realm: "demo", appId: DeviceFixture.iosApp).challenge
            let request = try Self.registration(installation, appId: DeviceFixture.iosApp, challenge: challenge, forged: &forged)
            let deviceId = try await service.register(realm: "demo", request: request, developmentTraffic: false).device.deviceId
            let now = Int64(server.clock.now().timeIntervalSince1970)

            let plain = try await client.deviceStatus(headers: try installation.signedHeaders(
                deviceId: deviceId, method: "GET", target: "/realms/demo/v1/device/status", timestamp: now
            ))
            XCTAssertEqual(plain.status, .unauthorized, "\(plain.json)")
            XCTAssertEqual(plain.json["error"]?.stringValue, "INVALID_SIGNATURE")
            XCTAssertTrue(plain.json["message"]?.stringValue?.contains("appattest-1") ?? false, "\(plain.json)")
            let asserted = try await client.deviceStatus(headers: try Self.assertionHeaders(forged, deviceId: deviceId, counter: 1, timestamp: now))
            XCTAssertEqual(asserted.status, .ok, "\(asserted.json)")

            let next = TestInstallation()
            let rotationChallenge = try await client.deviceChallenge()
            let body = try DeviceSignedRequestTests.rotation(to: next, challenge: rotationChallenge)
            let bytes = StrictJSON.serialize(body)
            let rotated = try await client.postRaw("/realms/demo/v1/device/rotate-key", bytes: bytes, headers: try installation.signedHeaders(
                deviceId: deviceId, method: "POST", target: "/realms/demo/v1/device/rotate-key", body: bytes, timestamp: now
            ))
            XCTAssertEqual(rotated.status, .ok, "the device key rotates with its own signature: \(rotated.json)")
        }
    }

    static func assertionHeaders(_ forged: ForgedAppAttestation, deviceId: String, counter: UInt32, timestamp: Int64) throws -> HTTPFields {
        let nonce = UUID().uuidString
        let message = SignedRequest.message(method: "GET", target: "/realms/demo/v1/device/status", timestamp: String(timestamp), nonce: nonce, body: [])
        return [
            HTTPField.Name("X-App-ID")!: DeviceFixture.iosApp, HTTPField.Name("X-Device-ID")!: deviceId,
            HTTPField.Name("X-Keyward-Timestamp")!: String(timestamp), HTTPField.Name("X-Keyward-Nonce")!: nonce,
            HTTPField.Name("X-Keyward-Sig-Version")!: "appattest-1",
            HTTPField.Name("X-Keyward-Signature")!: Data(try forged.assertion(counter: counter, clientData: message)).base64EncodedString(),
        ]
    }

    private static func assertRefused(_ service: DeviceService, _ request: RegistrationRequest, code: String, reason: String, line: UInt = #line) async {
        do {
            _ = try await service.register(realm: "demo", request: request, developmentTraffic: false)
            XCTFail("registered", line: line)
        } catch {
            XCTAssertEqual(error.code.rawValue, code, "\(error)", line: line)
            XCTAssertEqual(error.reason, reason, "\(error)", line: line)
        }
    }
}
