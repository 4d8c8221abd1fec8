// Tests: device registration with Play Integrity tokens, decoded locally or by Google within limits.
import AttestationTestSupport
import Crypto
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import KeywardAttestation
import XCTest

/// Registration with a Play Integrity token, through the running server: the app's response keys are stored with the
/// app (sealed), tokens are minted in the test with those keys the way Google mints them, and the verdict must carry
/// this registration's binding nonce.
final class DevicePlayIntegrityTests: XCTestCase {
    static let package = "com.example.keyward"
    static let certificateDigest = Array(SHA256.hash(data: Array("the app's signing certificate".utf8)))
    static var digestHex: [String] { [certificateDigest.map { String(format: "%02x", $0) }.joined()] }

    static func verdict(nonce: String, requestedAt: Date, device: [String] = ["MEETS_DEVICE_INTEGRITY"], app: String = "PLAY_RECOGNIZED") -> JSONObject {
        [
            "requestDetails": .object([
                "requestPackageName": .string(package), "nonce": .string(nonce),
                "timestampMillis": .string(String(Int64(requestedAt.timeIntervalSince1970 * 1000))),
            ]),
            "appIntegrity": .object([
                "appRecognitionVerdict": .string(app), "packageName": .string(package), "versionCode": "42",
                "certificateSha256Digest": .array([.string(Base64URL.encode(certificateDigest))]),
            ]),
            "deviceIntegrity": .object(["deviceRecognitionVerdict": .array(device.map(JSONValue.string))]),
        ]
    }

    func testATokenForThisRegistrationRegistersAndOthersAreRefused() async throws {
        try await TestServer.forEachEngine { server, client in
            let keys = PlayIntegrityTestKeys()
            _ = try await server.runtime.devices.apps.add(DeviceAppService.Registration(
                realm: "demo", appId: "android-app", platform: .android, environment: .production, packages: [Self.package], signingCertDigests: Self.digestHex,
                playIntegrityKeys: try PlayIntegrityKeys(decryptionKey: keys.decryptionKeyBase64, verificationKey: keys.verificationKeyBase64)
            ))
            _ = try await server.runtime.devices.apps.add(DeviceAppService.Registration(
                realm: "demo", appId: "keyless-app", platform: .android, environment: .production, packages: [Self.package], signingCertDigests: Self.digestHex
            ))

            func register(_ app: String = "android-app", token: (String, TestInstallation) throws -> String) async throws -> JSONAnswer {
                let installation = TestInstallation()
                let challenge = try await client.deviceChallenge(app)
                return try await client.registerDevice(try installation.registration(appId: app, challenge: challenge, platform: "android", extra: [
                    "attestation": .object(["type": "play-integrity", "token": .string(try token(challenge, installation))]),
                ]))
            }
            func nonce(_ challenge: String, _ installation: TestInstallation) -> String {
                Base64URL.encode(SHA256.hash(data: Array((challenge + installation.publicKeyText).utf8)))
            }
            let now = server.clock.now()

            let registered = try await register { challenge, installation in
                try keys.token(Self.verdict(nonce: nonce(challenge, installation), requestedAt: now))
            }
            XCTAssertEqual(registered.status, .created, "\(registered.json)")
            XCTAssertEqual(registered.json["status"]?.stringValue, "registered")

            let refusals: [(String, String, (String, TestInstallation) throws -> String)] = [
                ("another registration's nonce", "NONCE_MISMATCH", { _, _ in
                    try keys.token(Self.verdict(nonce: Base64URL.encode([UInt8](repeating: 1, count: 32)), requestedAt: now))
                }),
                ("an old request", "STALE", { challenge, installation in
                    try keys.token(Self.verdict(nonce: nonce(challenge, installation), requestedAt: now.addingTimeInterval(-3600)))
                }),
                ("an unrecognized app", "APP_NOT_RECOGNIZED", { challenge, installation in
                    try keys.token(Self.verdict(nonce: nonce(challenge, installation), requestedAt: now, app: "UNRECOGNIZED_VERSION"))
                }),
                ("a device meeting basic integrity only", "DEVICE_INTEGRITY_REFUSED", { challenge, installation in
                    try keys.token(Self.verdict(nonce: nonce(challenge, installation), requestedAt: now, device: ["MEETS_BASIC_INTEGRITY"]))
                }),
                ("another app's keys", "UNDECRYPTABLE", { challenge, installation in
                    try PlayIntegrityTestKeys().token(Self.verdict(nonce: nonce(challenge, installation), requestedAt: now))
                }),
            ]
            for (name, reason, token) in refusals {
                let answer = try await register(token: token)
                XCTAssertEqual(answer.status, .badRequest, name)
                XCTAssertEqual(answer.json["error"]?.stringValue, "INVALID_ATTESTATION", "\(name): \(answer.json)")
                XCTAssertEqual(answer.json["reason"]?.stringValue, reason, "\(name): \(answer.json)")
            }
            let keyless = try await register("keyless-app") { challenge, installation in
                try keys.token(Self.verdict(nonce: nonce(challenge, installation), requestedAt: now))
            }
            XCTAssertEqual(keyless.json["reason"]?.stringValue, "VERIFIER_UNAVAILABLE", "\(keyless.json)")
        }
    }

    func testWrongKeysAreRefusedWhenTheAppIsAdded() throws {
        XCTAssertThrowsError(try PlayIntegrityKeys(decryptionKey: "AAAA", verificationKey: PlayIntegrityTestKeys().verificationKeyBase64)) { error in
            XCTAssertTrue("\(error)".contains("decryption key"), "\(error)")
        }
        XCTAssertThrowsError(try PlayIntegrityKeys(decryptionKey: PlayIntegrityTestKeys().decryptionKeyBase64, verificationKey: "not a key")) { error in
            XCTAssertTrue("\(error)".contains("verification key"), "\(error)")
        }
    }

    static func addGoogleApp(_ server: TestServer) async throws {
        _ = try await server.runtime.devices.apps.add(DeviceAppService.Registration(
            realm: "demo", appId: "google-app", platform: .android, environment: .production, packages: [package], signingCertDigests: digestHex, playIntegrityGoogle: true
        ))
    }

    /// A device service whose Google decoder is `google` (a local stand-in) with a service account's token.
    static func googleService(_ server: TestServer, _ google: FakeGoogle, limits: DeviceService.Limits = .default) -> DeviceService {
        var verifier = PlatformAttestationVerifier()
        let endpoint = google.endpoint
        verifier.googlePlayIntegrity = { (package: String) throws(AttestationFailure) -> any PlayIntegrityDecoder in
            try GooglePlayIntegrityDecoder(packageName: package, endpoint: endpoint, accessToken: { "ya29.service-account" })
        }
        let runtime = server.runtime
        return DeviceService(
            store: SQLDeviceStore(database: runtime.database), singleUse: runtime.singleUse, challengeKey: SymmetricKey(size: .bits256),
            attestations: verifier, audit: runtime.audit, metrics: runtime.metrics, clock: server.clock, limits: limits
        )
    }

    /// An app set to Google's decodeIntegrityToken: the token goes to Google (a local stand-in here) with the
    /// service account's bearer token, and Google's verdict gets the same checks; the running server, which has no
    /// service account configured, cannot judge such tokens.
    func testGoogleDecodesForAppsSetToIt() async throws {
        try await TestServer.forEachEngine { server, client in
            try await Self.addGoogleApp(server)
            try await FakeGoogle().run { google in
                let service = Self.googleService(server, google)
                func request() async throws -> (RegistrationRequest, String) {
                    let installation = TestInstallation()
                    let challenge = try await service.challenge(realm: "demo", appId: "google-app").challenge
                    let nonce = Base64URL.encode(SHA256.hash(data: Array((challenge + installation.publicKeyText).utf8)))
                    let body = try installation.registration(appId: "google-app", challenge: challenge, platform: "android", extra: [
                        "attestation": .object(["type": "play-integrity", "token": .string(GooglePlayIntegrityDecoderTests.token)]),
                    ])
                    return (try RegistrationRequest(json: body), nonce)
                }
                let (good, nonce) = try await request()
                google.answer(.ok, ["tokenPayloadExternal": .object(Self.verdict(nonce: nonce, requestedAt: server.clock.now()))])
                let registered = try await service.register(realm: "demo", request: good, developmentTraffic: false)
                XCTAssertEqual(registered.device.status, .registered)
                XCTAssertEqual(google.requests.last?.path, "/v1/\(Self.package):decodeIntegrityToken")
                XCTAssertEqual(google.requests.last?.authorization, "Bearer ya29.service-account")

                let (other, _) = try await request()
                google.answer(.badRequest, ["error": .object(["message": "Integrity token cannot be decoded"])])
                do {
                    _ = try await service.register(realm: "demo", request: other, developmentTraffic: false)
                    XCTFail("registered with a token Google could not decode")
                } catch let error as DeviceError {
                    XCTAssertEqual(error.reason, "UNDECRYPTABLE", "\(error)")
                }
            }
            let installation = TestInstallation()
            let challenge = try await client.deviceChallenge("google-app")
            let answer = try await client.registerDevice(try installation.registration(appId: "google-app", challenge: challenge, platform: "android", extra: [
                "attestation": .object(["type": "play-integrity", "token": "aaa.bbb.ccc.ddd.eee"]),
            ]))
            XCTAssertEqual(answer.json["reason"]?.stringValue, "VERIFIER_UNAVAILABLE", "\(answer.json)")
            XCTAssertEqual(answer.status, .serviceUnavailable)
            // The operator reads why in the audit log; the client only learns to retry.
            let refusals = try await server.runtime.audit.events(realm: "demo").filter { $0.type == .deviceRegistrationRefused }
            XCTAssertTrue(refusals.contains { $0.detailsJSON.contains("devices.playIntegrity.serviceAccountFile") }, "\(refusals)")
        }
    }

    /// Security review M1: each registration of an app set to Google's decodeIntegrityToken was one outbound call,
    /// made before any limit, so a flood of junk tokens could spend the app's daily Google quota. A token that is not a
    /// Play Integrity JWE is refused without a call, and calls are limited per client address and per app within the
    /// hour; every refusal is counted.
    func testGoogleIsCalledOnlyForWellFormedTokensAndWithinItsLimits() async throws {
        try await TestServer.forEachEngine { server, _ in
            try await Self.addGoogleApp(server)
            try await FakeGoogle().run { google in
                var limits = DeviceService.Limits.default
                limits.googleDecodesPerAddressPerHour = 3
                limits.googleDecodesPerAppPerHour = 5
                let runtime = server.runtime
                let service = Self.googleService(server, google, limits: limits)
                google.answer(.badRequest, ["error": .object(["message": "Integrity token cannot be decoded"])])
                let wellFormed = try PlayIntegrityTestKeys().token(Self.verdict(nonce: "n", requestedAt: server.clock.now()))
                func register(_ token: String, from address: String) async throws -> DeviceError {
                    let installation = TestInstallation()
                    let challenge = try await service.challenge(realm: "demo", appId: "google-app").challenge
                    let request = try RegistrationRequest(json: try installation.registration(appId: "google-app", challenge: challenge, platform: "android", extra: [
                        "attestation": .object(["type": "play-integrity", "token": .string(token)]),
                    ]))
                    do {
                        let registered = try await service.register(realm: "demo", request: request, developmentTraffic: false, clientAddress: address)
                        XCTFail("registered: \(registered.device)")
                        return DeviceError.unavailable
                    } catch let error as DeviceError {
                        return error
                    }
                }

                for junk in ["aaa.bbb.ccc.ddd.eee", "x", String(repeating: "A", count: 301), wellFormed + ".", wellFormed + "+"] {
                    let refused = try await register(junk, from: "198.51.100.1")
                    XCTAssertEqual(refused.code, .attestationUnavailable, "a malformed token is no attestation (the app's missing policy refuses): \(refused)")
                }
                XCTAssertEqual(google.requests.count, 0, "malformed tokens were sent to Google")

                var outcomes: [String] = []
                for address in Array(repeating: "198.51.100.1", count: 5) + ["198.51.100.2", "198.51.100.3", "198.51.100.4"] {
                    let refused = try await register(wellFormed, from: address)
                    outcomes.append(refused.reason ?? refused.code.rawValue)
                }
                XCTAssertEqual(outcomes, [
                    "UNDECRYPTABLE", "UNDECRYPTABLE", "UNDECRYPTABLE", "TOO_MANY_REGISTRATIONS", "TOO_MANY_REGISTRATIONS",
                    "UNDECRYPTABLE", "UNDECRYPTABLE", "TOO_MANY_REGISTRATIONS",
                ], "three calls per address, five per app within the hour")
                XCTAssertEqual(google.requests.count, 5)

                server.clock.advance(by: 3601)
                let nextHour = try await register(wellFormed, from: "198.51.100.1")
                XCTAssertEqual(nextHour.reason, "UNDECRYPTABLE", "the next hour has a budget of its own")
                XCTAssertEqual(google.requests.count, 6)

                let exposition = runtime.metrics.render()
                XCTAssertTrue(exposition.contains("keyward_play_integrity_google_refused_total{reason=\"malformed\"} 5"), exposition)
                XCTAssertTrue(exposition.contains("keyward_play_integrity_google_refused_total{reason=\"address_limit\"} 2"), exposition)
                XCTAssertTrue(exposition.contains("keyward_play_integrity_google_refused_total{reason=\"app_limit\"} 1"), exposition)
            }
        }
    }

    /// Security review H3 and M4: an attestation that cannot be read is no attestation (the missing policy decides,
    /// not the weaker failed one), a verifier that cannot answer is a 503, and a refusal tells the client its reason,
    /// not the app's settings.
    func testUnreadableAttestationsAreMissingOnesAndRefusalsKeepTheAppsSettings() async throws {
        try await TestServer.forEachEngine { server, client in
            let keys = PlayIntegrityTestKeys()
            _ = try await server.runtime.devices.apps.add(DeviceAppService.Registration(
                realm: "demo", appId: "android-app", platform: .android, environment: .production, packages: [Self.package], signingCertDigests: Self.digestHex,
                missingAttestation: .reject, failedAttestation: .pending,
                playIntegrityKeys: try PlayIntegrityKeys(decryptionKey: keys.decryptionKeyBase64, verificationKey: keys.verificationKeyBase64)
            ))
            _ = try await server.runtime.devices.apps.add(DeviceAppService.Registration(
                realm: "demo", appId: "google-app", platform: .android, environment: .production, packages: [Self.package], signingCertDigests: Self.digestHex, playIntegrityGoogle: true
            ))
            func register(_ app: String, token: @escaping (String, TestInstallation) throws -> String) async throws -> JSONAnswer {
                let installation = TestInstallation()
                let challenge = try await client.deviceChallenge(app)
                return try await client.registerDevice(try installation.registration(appId: app, challenge: challenge, platform: "android", extra: [
                    "attestation": .object(["type": "play-integrity", "token": .string(try token(challenge, installation))]),
                ]))
            }
            let garbage = try await register("android-app") { _, _ in "x" }
            XCTAssertEqual(garbage.status, .badRequest, "\(garbage.json)")
            XCTAssertEqual(garbage.json["error"]?.stringValue, "ATTESTATION_UNAVAILABLE", "\(garbage.json)")

            let outage = try await register("google-app") { _, _ in "aaa.bbb.ccc.ddd.eee" }
            XCTAssertEqual(outage.status, .serviceUnavailable, "\(outage.json)")
            XCTAssertEqual(outage.json["reason"]?.stringValue, "VERIFIER_UNAVAILABLE")
            XCTAssertFalse(outage.json["message"]?.stringValue?.contains("serviceAccountFile") ?? true, "\(outage.json)")

            var verdict = Self.verdict(nonce: "x", requestedAt: server.clock.now())
            verdict["requestDetails"] = .object(["requestPackageName": "com.attacker.app", "nonce": "x", "timestampMillis": "1"])
            let wrongPackage = try await register("android-app") { _, _ in try keys.token(verdict) }
            XCTAssertEqual(wrongPackage.status, .created, "the failed policy is pending: \(wrongPackage.json)")
            let strict = try await server.runtime.devices.apps.add(DeviceAppService.Registration(
                realm: "demo", appId: "strict-app", platform: .android, environment: .production, packages: [Self.package], signingCertDigests: Self.digestHex,
                playIntegrityKeys: try PlayIntegrityKeys(decryptionKey: keys.decryptionKeyBase64, verificationKey: keys.verificationKeyBase64)
            ))
            XCTAssertEqual(strict.failedAttestation, .reject)
            let refused = try await register("strict-app") { _, _ in try keys.token(verdict) }
            XCTAssertEqual(refused.json["reason"]?.stringValue, "APP_IDENTITY_MISMATCH", "\(refused.json)")
            XCTAssertFalse(refused.json["message"]?.stringValue?.contains(Self.package) ?? true, "the allowed packages leaked: \(refused.json)")
        }
    }
}
