// Tests: device registration and key rotation with Android Key Attestation, each rule refusing with its reason.
import AttestationTestSupport
import Crypto
import Foundation
import KeywardAttestation
import KeywardJOSE
@testable import KeywardServer
import SwiftASN1
import X509
import XCTest

/// Registration with Android Key Attestation. A real chain cannot carry this server's challenge, so the chains here
/// carry a real device's KeyDescription with the challenge replaced, under a root the service pins in place of
/// Google's; the running server (Google's roots only) refuses them at the chain.
final class DeviceAndroidKeyTests: XCTestCase {
    static let signingDigest = "103938ee4537e59e8ee792f654504fb8346fc6b346d0bbc4415fc339fcfc8ec1"

    /// The KeyDescription of a real chain of Tests/Fixtures.
    static func realKeyDescription(_ name: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/android-key-attestation/\(name).pem")
        let leaf = try Certificate(pemEncoded: try String(contentsOf: url, encoding: .utf8).components(separatedBy: "-----END CERTIFICATE-----")[0] + "-----END CERTIFICATE-----\n")
        return try XCTUnwrap(ForgedAndroidAttestation.keyDescription(of: leaf))
    }

    static func service(_ server: TestServer, pinning forged: ForgedAndroidAttestation) -> DeviceService {
        let runtime = server.runtime
        return DeviceService(
            store: SQLDeviceStore(database: runtime.database), singleUse: runtime.singleUse,
            challengeKey: SymmetricKey(size: .bits256), attestations: PlatformAttestationVerifier(androidRoots: PinnedRoots([forged.root])),
            audit: runtime.audit, metrics: runtime.metrics, clock: server.clock
        )
    }

    static func addApp(_ server: TestServer, _ appId: String, environment: DeviceApp.Environment = .production, package: String = "com.google.android.attestation") async throws {
        _ = try await server.runtime.devices.apps.add(DeviceAppService.Registration(
            realm: "demo", appId: appId, platform: .android, environment: environment, packages: [package], signingCertDigests: [signingDigest]
        ))
    }

    /// A registration of `installation` whose chain certifies `certified` (the installation's key unless given) with
    /// `vector`'s KeyDescription attesting `attested` (the binding nonce unless given).
    static func registration(
        _ installation: TestInstallation, appId: String, challenge: String, forged: ForgedAndroidAttestation, vector: String,
        certified: P256.Signing.PublicKey? = nil, attested: [UInt8]? = nil, time: Date
    ) throws -> RegistrationRequest {
        let nonce = attested ?? BindingNonce(challenge: challenge, publicKey: installation.publicKeyText).digest
        let keyDescription = try ForgedAndroidAttestation.replacingChallenge(of: try realKeyDescription(vector), with: nonce)
        let chain = try forged.chain(certifying: certified ?? installation.key.publicKey, keyDescription: keyDescription, time: time)
        return try RegistrationRequest(json: try installation.registration(appId: appId, challenge: challenge, platform: "android", extra: [
            "attestation": .object(["type": "android-key", "chain": .array(chain.map { .string(Data($0).base64EncodedString()) })]),
        ]))
    }

    func testAnAttestedHardwareKeyRegistersAndEveryRuleRefusesWithItsReason() async throws {
        try await TestServer.forEachEngine { server, client in
            try await Self.addApp(server, "android-app")
            try await Self.addApp(server, "dev-android", environment: .development, package: "com.google.wireless.android.security.attestationverifier.collector")
            try await Self.addApp(server, "other-package", package: "com.example.other")
            let now = server.clock.now()
            let forged = try ForgedAndroidAttestation(time: now)
            let service = Self.service(server, pinning: forged)
            func challenge(_ app: String) async throws -> String { try await service.challenge(realm: "demo", appId: app).challenge }

            let installation = TestInstallation()
            let registered = try await service.register(realm: "demo", request: try Self.registration(
                installation, appId: "android-app", challenge: try await challenge("android-app"), forged: forged, vector: "caiman/sdk36/SB_EC_RKP", time: now
            ), developmentTraffic: false)
            XCTAssertEqual(registered.device.status, .registered)
            let summary = try StrictJSON.parseObject(Array(registered.device.attestation.utf8))
            XCTAssertEqual(summary["type"]?.stringValue, "android-key")
            XCTAssertEqual(summary["security_level"]?.stringValue, "STRONG_BOX", "\(summary)")
            XCTAssertEqual(summary["device_locked"]?.boolValue, true)

            let cases: [(String, String, RegistrationRequest)] = [
                ("another key certified", "PUBLIC_KEY_MISMATCH", try Self.registration(
                    TestInstallation(), appId: "android-app", challenge: try await challenge("android-app"), forged: forged,
                    vector: "caiman/sdk36/SB_EC_RKP", certified: P256.Signing.PrivateKey().publicKey, time: now)),
                ("another challenge attested", "CHALLENGE_MISMATCH", try Self.registration(
                    TestInstallation(), appId: "android-app", challenge: try await challenge("android-app"), forged: forged,
                    vector: "caiman/sdk36/SB_EC_RKP", attested: Array(repeating: 7, count: 32), time: now)),
                ("another app's package", "APP_IDENTITY_MISMATCH", try Self.registration(
                    TestInstallation(), appId: "other-package", challenge: try await challenge("other-package"), forged: forged,
                    vector: "caiman/sdk36/SB_EC_RKP", time: now)),
                ("unverified boot for a production app", "BOOT_STATE_REFUSED", try Self.registration(
                    TestInstallation(), appId: "android-app", challenge: try await challenge("android-app"), forged: forged,
                    vector: "akita/sdk34/TEE_EC_NONE", time: now)),
            ]
            for (name, reason, request) in cases {
                do {
                    _ = try await service.register(realm: "demo", request: request, developmentTraffic: false)
                    XCTFail("\(name): registered")
                } catch let error as DeviceError {
                    XCTAssertEqual(error.code, .invalidAttestation, "\(name): \(error)")
                    XCTAssertEqual(error.reason, reason, "\(name): \(error)")
                } catch {
                    XCTFail("\(name): \(error)")
                }
            }

            // A development app does not ask for verified boot (test devices are unlocked).
            let onTestDevice = try await service.register(realm: "demo", request: try Self.registration(
                TestInstallation(), appId: "dev-android", challenge: try await challenge("dev-android"), forged: forged, vector: "akita/sdk34/TEE_EC_NONE", time: now
            ), developmentTraffic: false)
            XCTAssertEqual(onTestDevice.device.status, .registered)

            // The running server pins Google's roots only.
            let viaServer = TestInstallation()
            let serverChallenge = try await client.deviceChallenge("android-app")
            let nonce = BindingNonce(challenge: serverChallenge, publicKey: viaServer.publicKeyText).digest
            let chain = try forged.chain(
                certifying: viaServer.key.publicKey,
                keyDescription: try ForgedAndroidAttestation.replacingChallenge(of: try Self.realKeyDescription("caiman/sdk36/SB_EC_RKP"), with: nonce), time: now
            )
            let refused = try await client.registerDevice(try viaServer.registration(appId: "android-app", challenge: serverChallenge, platform: "android", extra: [
                "attestation": .object(["type": "android-key", "chain": .array(chain.map { .string(Data($0).base64EncodedString()) })]),
            ]))
            XCTAssertEqual(refused.json["error"]?.stringValue, "INVALID_ATTESTATION")
            XCTAssertEqual(refused.json["reason"]?.stringValue, "CHAIN_INVALID", "\(refused.json)")
        }
    }

    /// Security review M2: a hardware-attested key is replaced only by a key with an attestation of its own, bound to
    /// the rotation's challenge; a plain software key is refused.
    func testAnAttestedKeyRotatesOnlyToAnotherAttestedKey() async throws {
        try await TestServer.forEachEngine { server, _ in
            try await Self.addApp(server, "android-app")
            let now = server.clock.now()
            let forged = try ForgedAndroidAttestation(time: now)
            let service = Self.service(server, pinning: forged)
            let installation = TestInstallation()
            let challenge = try await service.challenge(realm: "demo", appId: "android-app").challenge
            let device = try await service.register(realm: "demo", request: try Self.registration(
                installation, appId: "android-app", challenge: challenge, forged: forged, vector: "caiman/sdk36/SB_EC_RKP", time: now
            ), developmentTraffic: false).device

            func rotation(to new: TestInstallation, attestedFor nonce: [UInt8]?) async throws -> KeyRotationRequest {
                let challenge = try await service.challenge(realm: "demo", appId: "android-app").challenge
                var body: JSONObject = [
                    "challenge": .string(challenge), "new_public_key": .string(new.publicKeyText),
                    "proof": .string(Data(try new.key.signature(for: Array(challenge.utf8)).derRepresentation).base64EncodedString()),
                ]
                if let nonce {
                    let bound = nonce.isEmpty ? BindingNonce(challenge: challenge, publicKey: new.publicKeyText).digest : nonce
                    let keyDescription = try ForgedAndroidAttestation.replacingChallenge(of: try Self.realKeyDescription("caiman/sdk36/SB_EC_RKP"), with: bound)
                    let chain = try forged.chain(certifying: new.key.publicKey, keyDescription: keyDescription, time: now)
                    body["attestation"] = .object(["type": "android-key", "chain": .array(chain.map { .string(Data($0).base64EncodedString()) })])
                }
                return try KeyRotationRequest(json: body)
            }
            do {
                _ = try await service.rotateKey(device: device, rotation: try await rotation(to: TestInstallation(), attestedFor: nil))
                XCTFail("rotated a hardware-attested key to an unattested one")
            } catch let error as DeviceError {
                XCTAssertEqual(error.code, .attestationUnavailable, "\(error)")
            }
            do {
                _ = try await service.rotateKey(device: device, rotation: try await rotation(to: TestInstallation(), attestedFor: Array(repeating: 3, count: 32)))
                XCTFail("rotated with an attestation bound to another challenge")
            } catch let error as DeviceError {
                XCTAssertEqual(error.reason, "CHALLENGE_MISMATCH", "\(error)")
            }
            let new = TestInstallation()
            let rotated = try await service.rotateKey(device: device, rotation: try await rotation(to: new, attestedFor: []))
            XCTAssertEqual(rotated.publicKey, Array(new.key.publicKey.x963Representation))
        }
    }

    /// Second security review M2: a Play Integrity token vouches for the app, not for a key, so it does not replace a
    /// key Android Key Attestation certified; an attested rotation keeps the security level or raises it, and the
    /// device's summary is then the new key's, not the old one's.
    func testAHardwareAttestedKeyDoesNotRotateOnAPlayIntegrityTokenNorToAWeakerKey() async throws {
        try await TestServer.forEachEngine { server, _ in
            let runtime = server.runtime
            let masterKey = MasterKey.generate()
            let playKeys = PlayIntegrityTestKeys()
            let package = "com.google.android.attestation"
            _ = try await DeviceAppService(store: SQLDeviceStore(database: runtime.database), masterKey: masterKey, audit: runtime.audit, clock: server.clock)
                .add(DeviceAppService.Registration(
                    realm: "demo", appId: "android-app", platform: .android, environment: .production, packages: [package],
                    signingCertDigests: [Self.signingDigest],
                    playIntegrityKeys: try PlayIntegrityKeys(decryptionKey: playKeys.decryptionKeyBase64, verificationKey: playKeys.verificationKeyBase64)
                ))
            let now = server.clock.now()
            let forged = try ForgedAndroidAttestation(time: now)
            var verifier = PlatformAttestationVerifier(androidRoots: PinnedRoots([forged.root]))
            verifier.masterKey = masterKey
            let service = DeviceService(
                store: SQLDeviceStore(database: runtime.database), singleUse: runtime.singleUse, challengeKey: SymmetricKey(size: .bits256),
                attestations: verifier, audit: runtime.audit, metrics: runtime.metrics, clock: server.clock
            )
            let challenge = try await service.challenge(realm: "demo", appId: "android-app").challenge
            var device = try await service.register(realm: "demo", request: try Self.registration(
                TestInstallation(), appId: "android-app", challenge: challenge, forged: forged, vector: "caiman/sdk36/TEE_EC_RKP", time: now
            ), developmentTraffic: false).device
            XCTAssertEqual(try StrictJSON.parseObject(Array(device.attestation.utf8))["security_level"]?.stringValue, "TRUSTED_ENVIRONMENT")

            func rotation(attestation: (String, TestInstallation) throws -> JSONObject) async throws -> KeyRotationRequest {
                let new = TestInstallation()
                let challenge = try await service.challenge(realm: "demo", appId: "android-app").challenge
                return try KeyRotationRequest(json: [
                    "challenge": .string(challenge), "new_public_key": .string(new.publicKeyText),
                    "proof": .string(Data(try new.key.signature(for: Array(challenge.utf8)).derRepresentation).base64EncodedString()),
                    "attestation": .object(try attestation(challenge, new)),
                ])
            }
            func androidKey(_ vector: String) -> (String, TestInstallation) throws -> JSONObject {
                { challenge, new in
                    let keyDescription = try ForgedAndroidAttestation.replacingChallenge(
                        of: try Self.realKeyDescription(vector), with: BindingNonce(challenge: challenge, publicKey: new.publicKeyText).digest
                    )
                    let chain = try forged.chain(certifying: new.key.publicKey, keyDescription: keyDescription, time: now)
                    return ["type": "android-key", "chain": .array(chain.map { .string(Data($0).base64EncodedString()) })]
                }
            }

            // A valid Play Integrity verdict, bound to the rotation's challenge and new key.
            let onPlayIntegrity = try await rotation { challenge, new in
                let verdict: JSONObject = [
                    "requestDetails": .object([
                        "requestPackageName": .string(package),
                        "nonce": .string(BindingNonce(challenge: challenge, publicKey: new.publicKeyText).playIntegrityNonce),
                        "timestampMillis": .string(String(Int64(now.timeIntervalSince1970 * 1000))),
                    ]),
                    "appIntegrity": .object([
                        "appRecognitionVerdict": "PLAY_RECOGNIZED", "packageName": .string(package), "versionCode": "42",
                        "certificateSha256Digest": .array([.string(Base64URL.encode(HexDigit.bytes(Self.signingDigest) ?? []))]),
                    ]),
                    "deviceIntegrity": .object(["deviceRecognitionVerdict": ["MEETS_DEVICE_INTEGRITY"]]),
                ]
                return ["type": "play-integrity", "token": .string(try playKeys.token(verdict))]
            }
            do {
                let rotated = try await service.rotateKey(device: device, rotation: onPlayIntegrity)
                XCTFail("a hardware-attested key rotated to a key only Play Integrity vouched for: \(rotated.attestation)")
            } catch let error as DeviceError {
                XCTAssertEqual(error.code, .attestationUnavailable, "\(error)")
                XCTAssertTrue(error.message.contains("Android Key Attestation"), "\(error)")
            }

            // Up to StrongBox: the summary says so.
            device = try await service.rotateKey(device: device, rotation: try await rotation(attestation: androidKey("caiman/sdk36/SB_EC_RKP")))
            let stored = try await XCTUnwrapAsync(try await SQLDeviceStore(database: runtime.database).device(realm: "demo", appId: "android-app", deviceId: device.deviceId))
            let summary = try StrictJSON.parseObject(Array(stored.attestation.utf8))
            XCTAssertEqual(summary["type"]?.stringValue, "android-key")
            XCTAssertEqual(summary["security_level"]?.stringValue, "STRONG_BOX", "the summary is the new key's: \(summary)")

            // And not back down to the TEE.
            do {
                _ = try await service.rotateKey(device: device, rotation: try await rotation(attestation: androidKey("caiman/sdk36/TEE_EC_RKP")))
                XCTFail("a StrongBox key rotated to a TEE key")
            } catch let error as DeviceError {
                XCTAssertEqual(error.code, .invalidAttestation, "\(error)")
                XCTAssertEqual(error.reason, "KEY_PROPERTIES_REFUSED", "\(error)")
            }
        }
    }
}
