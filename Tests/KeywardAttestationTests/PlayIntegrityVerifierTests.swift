// Tests: Play Integrity verification with the app's keys, one test per check in the verifier's order.
import AttestationTestSupport
import Crypto
import Foundation
import KeywardAttestation
import KeywardJOSE
import XCTest

/// Play Integrity verification with the app's own keys, on tokens minted in the test with test keys (JWS ES256 in a
/// JWE A256KW + A256GCM, as Google mints them): one test per check, in the verifier's order.
final class PlayIntegrityVerifierTests: XCTestCase {
    private let keys = PlayIntegrityTestKeys()
    private let time = PlayVerdictPayload.verificationTime

    private func verify(
        _ payload: PlayVerdictPayload, policy: PlayIntegrityPolicy = .testApp(), at time: Date? = nil
    ) async throws -> PlayIntegrityResult {
        try await keys.verifier().verify(keys.token(payload.json), policy: policy, at: time ?? self.time)
    }

    // MARK: A valid token

    func testValidTokenVerifiesAndReportsTheVerdict() async throws {
        let result = try await verify(PlayVerdictPayload())
        XCTAssertEqual(result.verdict.requestPackageName, PlayVerdictPayload.package)
        XCTAssertEqual(result.verdict.nonce, PlayVerdictPayload.nonce)
        XCTAssertEqual(result.requestedAt, time.addingTimeInterval(-20))
        XCTAssertEqual(result.verdict.appRecognitionVerdict, "PLAY_RECOGNIZED")
        XCTAssertEqual(result.verdict.packageName, PlayVerdictPayload.package)
        XCTAssertEqual(result.verdict.certificateSha256Digests, [Base64URL.encode(PlayVerdictPayload.certificateDigest)])
        XCTAssertEqual(result.verdict.versionCode, 42)
        XCTAssertEqual(result.verdict.deviceRecognitionVerdicts, ["MEETS_DEVICE_INTEGRITY"])
        XCTAssertEqual(result.verdict.appLicensingVerdict, "LICENSED")
        XCTAssertEqual(result.source, .local)
        XCTAssertEqual(result.verifiedAt, time)
        XCTAssertEqual(result.checks.map(\.name), ["decoding", "requestPackage", "nonce", "timestamp", "appRecognition", "appIdentity", "deviceIntegrity"])
        XCTAssertEqual(Set(result.checks.map(\.outcome)), [.passed])
    }

    func testResultEncodesAsTheReportCLIPrints() async throws {
        let result = try await verify(PlayVerdictPayload())
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: encoder.encode(result)) as? [String: Any])
        XCTAssertEqual(json["requestPackageName"] as? String, PlayVerdictPayload.package)
        XCTAssertEqual(json["nonce"] as? String, PlayVerdictPayload.nonce)
        XCTAssertEqual(json["timestampMillis"] as? Int, Int((time.timeIntervalSince1970 - 20) * 1000))
        XCTAssertEqual(json["requestedAt"] as? String, time.addingTimeInterval(-20).formatted(.iso8601))
        XCTAssertEqual(json["appRecognitionVerdict"] as? String, "PLAY_RECOGNIZED")
        XCTAssertEqual(json["certificateSha256Digests"] as? [String], [Base64URL.encode(PlayVerdictPayload.certificateDigest)])
        XCTAssertEqual(json["versionCode"] as? Int, 42)
        XCTAssertEqual(json["deviceRecognitionVerdicts"] as? [String], ["MEETS_DEVICE_INTEGRITY"])
        XCTAssertEqual(json["appLicensingVerdict"] as? String, "LICENSED")
        XCTAssertEqual(json["decodedBy"] as? String, "LOCAL")
        XCTAssertEqual((json["checks"] as? [[String: Any]])?.count, 7)
        XCTAssertNil(json["requestHash"])
    }

    // MARK: requestDetails

    func testWrongRequestPackageIsRefused() async {
        var payload = PlayVerdictPayload()
        payload.requestPackageName = "com.example.other"
        await assertPlayRefused(.appIdentityMismatch) { try await self.verify(payload) }
    }

    func testWrongNonceIsRefused() async {
        var payload = PlayVerdictPayload()
        payload.nonce = Base64URL.encode(Array(SHA256.hash(data: Array("another registration".utf8))))
        await assertPlayRefused(.nonceMismatch) { try await self.verify(payload) }
        payload.nonce = String(PlayVerdictPayload.nonce.dropLast())
        await assertPlayRefused(.nonceMismatch, "one character short") { try await self.verify(payload) }
        payload.nonce = nil
        await assertPlayRefused(.nonceMismatch, "no nonce") { try await self.verify(payload) }
    }

    func testNonceInPaddedStandardBase64IsAccepted() async throws {
        let standard = Data(PlayVerdictPayload.nonceBytes).base64EncodedString()
        XCTAssertTrue(standard.hasSuffix("=") && standard.contains("+") && standard.contains("/"), standard)
        var payload = PlayVerdictPayload()
        payload.nonce = standard
        let result = try await verify(payload)
        XCTAssertEqual(result.verdict.nonce, standard)
        // And the other way round: the app's policy written padded, the token web-safe.
        var policy = PlayIntegrityPolicy.testApp()
        policy.expectedNonce = standard
        _ = try await verify(PlayVerdictPayload(), policy: policy)
        // Unpadded standard and padded web-safe too.
        for variant in [standard.replacingOccurrences(of: "=", with: ""), PlayVerdictPayload.nonce + "="] {
            payload.nonce = variant
            _ = try await verify(payload)
        }
    }

    func testRequestHashOfAStandardRequestIsCompared() async throws {
        var payload = PlayVerdictPayload()
        payload.nonce = nil
        payload.requestHash = PlayVerdictPayload.nonce
        let result = try await verify(payload)
        XCTAssertEqual(result.verdict.requestHash, PlayVerdictPayload.nonce)
        payload.requestHash = "some-other-hash"
        await assertPlayRefused(.nonceMismatch) { try await self.verify(payload) }
    }

    func testStaleTimestampIsRefused() async throws {
        var payload = PlayVerdictPayload()
        payload.timestampMillis = .string(String(Int64((time.timeIntervalSince1970 - 301) * 1000)))
        await assertPlayRefused(.stale, "301 s old") { try await self.verify(payload) }
        payload.timestampMillis = .string(String(Int64((time.timeIntervalSince1970 - 300) * 1000)))
        _ = try await verify(payload)
        payload.timestampMillis = .string(String(Int64((time.timeIntervalSince1970 + 61) * 1000)))
        await assertPlayRefused(.stale, "61 s ahead") { try await self.verify(payload) }
        payload.timestampMillis = .string(String(Int64((time.timeIntervalSince1970 + 60) * 1000)))
        _ = try await verify(payload)
        payload.timestampMillis = "0"
        await assertPlayRefused(.stale, "1970") { try await self.verify(payload) }
    }

    func testFreshnessWindowIsThePolicys() async throws {
        var payload = PlayVerdictPayload()
        payload.timestampMillis = .string(String(Int64((time.timeIntervalSince1970 - 3600) * 1000)))
        var policy = PlayIntegrityPolicy.testApp()
        policy.maxAge = 3601
        _ = try await verify(payload, policy: policy)
        policy.maxAge = 90
        payload.timestampMillis = .string(String(Int64((time.timeIntervalSince1970 - 91) * 1000)))
        await assertPlayRefused(.stale) { try await self.verify(payload, policy: policy) }
    }

    func testTimestampAsAJSONNumberIsRead() async throws {
        var payload = PlayVerdictPayload()
        payload.timestampMillis = .number((time.timeIntervalSince1970 - 5) * 1000)
        let result = try await verify(payload)
        XCTAssertEqual(result.requestedAt, time.addingTimeInterval(-5))
    }

    // MARK: appIntegrity

    func testUnrecognizedAppIsRefused() async {
        for verdict in ["UNRECOGNIZED_VERSION", "UNEVALUATED", "play_recognized", ""] {
            var payload = PlayVerdictPayload()
            payload.appRecognitionVerdict = verdict
            if verdict == "UNEVALUATED" {
                // Google then leaves out what it did not evaluate.
                payload.packageName = nil
                payload.certificateDigests = nil
                payload.versionCode = nil
            }
            await assertPlayRefused(.appNotRecognized, verdict) { try await self.verify(payload) }
        }
    }

    func testWrongAppPackageIsRefused() async {
        var payload = PlayVerdictPayload()
        payload.packageName = "com.example.other"
        await assertPlayRefused(.appIdentityMismatch) { try await self.verify(payload) }
        payload.packageName = nil
        await assertPlayRefused(.appIdentityMismatch, "no package") { try await self.verify(payload) }
    }

    func testAnyOfTheAppsPackagesIsAccepted() async throws {
        var payload = PlayVerdictPayload()
        payload.requestPackageName = "com.example.keyward.beta"
        payload.packageName = "com.example.keyward.beta"
        var policy = PlayIntegrityPolicy.testApp()
        policy.packageNames = ["com.example.keyward", "com.example.keyward.beta"]
        _ = try await verify(payload, policy: policy)
        policy.packageNames = []
        await assertPlayRefused(.appIdentityMismatch, "no package configured") { try await self.verify(payload, policy: policy) }
    }

    func testSigningCertificateDigestMustBeOnTheAllowList() async throws {
        var payload = PlayVerdictPayload()
        payload.certificateDigests = [Base64URL.encode(Array(SHA256.hash(data: Array("a re-signed copy".utf8))))]
        await assertPlayRefused(.appIdentityMismatch) { try await self.verify(payload) }
        payload.certificateDigests = []
        await assertPlayRefused(.appIdentityMismatch, "no digest") { try await self.verify(payload) }
        payload.certificateDigests = ["not base64 at all!", Base64URL.encode(PlayVerdictPayload.certificateDigest)]
        _ = try await verify(payload)
        // Without an allow-list the digests are read and reported, not judged.
        payload.certificateDigests = ["anything"]
        let result = try await verify(payload, policy: .testApp(allowedCertificateDigests: []))
        XCTAssertEqual(result.verdict.certificateSha256Digests, ["anything"])
        XCTAssertTrue(result.checks.first { $0.name == "appIdentity" }?.detail.contains("not checked") ?? false)
    }

    // MARK: deviceIntegrity

    func testMissingDeviceVerdictIsRefused() async {
        var payload = PlayVerdictPayload()
        payload.deviceVerdicts = nil
        await assertPlayRefused(.deviceIntegrityRefused, "no deviceIntegrity") { try await self.verify(payload) }
        payload.deviceVerdicts = []
        await assertPlayRefused(.deviceIntegrityRefused, "empty deviceIntegrity") { try await self.verify(payload) }
        var relaxed = PlayIntegrityPolicy.testApp()
        relaxed.deviceIntegrity = .relaxed
        await assertPlayRefused(.deviceIntegrityRefused, "relaxed, still no verdict") { try await self.verify(payload, policy: relaxed) }
    }

    func testDeviceIntegrityLevelsByPolicy() async throws {
        let cases: [([String], PlayIntegrityPolicy.DeviceIntegrityRequirement, Bool)] = [
            (["MEETS_BASIC_INTEGRITY", "MEETS_DEVICE_INTEGRITY", "MEETS_STRONG_INTEGRITY"], .strong, true),
            (["MEETS_BASIC_INTEGRITY", "MEETS_DEVICE_INTEGRITY"], .strong, false),
            (["MEETS_STRONG_INTEGRITY"], .device, true),
            (["MEETS_DEVICE_INTEGRITY"], .device, true),
            (["MEETS_BASIC_INTEGRITY"], .device, false),
            (["MEETS_VIRTUAL_INTEGRITY"], .device, false),
            (["MEETS_BASIC_INTEGRITY"], .relaxed, true),
            (["MEETS_VIRTUAL_INTEGRITY"], .relaxed, true),
            (["UNKNOWN_LEVEL"], .relaxed, false),
        ]
        for (verdicts, requirement, accepted) in cases {
            var payload = PlayVerdictPayload()
            payload.deviceVerdicts = verdicts
            var policy = PlayIntegrityPolicy.testApp()
            policy.deviceIntegrity = requirement
            if accepted {
                let result = try await verify(payload, policy: policy)
                XCTAssertEqual(result.verdict.deviceRecognitionVerdicts, verdicts)
            } else {
                await assertPlayRefused(.deviceIntegrityRefused, "\(verdicts) under \(requirement)") { try await self.verify(payload, policy: policy) }
            }
        }
    }

    // MARK: Decoding

    func testTamperedCiphertextIsUndecryptable() async throws {
        let token = try keys.token(PlayVerdictPayload().json)
        var parts = token.split(separator: ".").map(String.init)
        var ciphertext = try Base64URL.decode(parts[3])
        ciphertext[ciphertext.count / 2] ^= 0x01
        parts[3] = Base64URL.encode(ciphertext)
        await assertPlayRefused(.undecryptable) {
            try await self.keys.verifier().verify(parts.joined(separator: "."), policy: .testApp(), at: self.time)
        }
    }

    func testWrongDecryptionKeyIsUndecryptable() async throws {
        let token = try keys.token(PlayVerdictPayload().json)
        let other = PlayIntegrityTestKeys()
        let verifier = try PlayIntegrityVerifier(decryptionKey: other.decryptionKeyBase64, verificationKey: keys.verificationKeyBase64)
        await assertPlayRefused(.undecryptable) { try await verifier.verify(token, policy: .testApp(), at: self.time) }
    }

    func testWrongVerificationKeyIsSignatureInvalid() async throws {
        let token = try keys.token(PlayVerdictPayload().json)
        let other = PlayIntegrityTestKeys()
        let verifier = try PlayIntegrityVerifier(decryptionKey: keys.decryptionKeyBase64, verificationKey: other.verificationKeyBase64)
        await assertPlayRefused(.signatureInvalid) { try await verifier.verify(token, policy: .testApp(), at: self.time) }
    }

    func testInnerJWSMustBeES256() async throws {
        let es384 = try SigningKey.generate(.es384)
        let jws = try JWS.sign(header: [:], claims: PlayVerdictPayload().json, key: es384)
        let token = try PlayIntegrityTestKeys.encrypt(Array(jws.utf8), with: keys.decryptionKey)
        await assertPlayRefused(.signatureInvalid) { try await self.keys.verifier().verify(token, policy: .testApp(), at: self.time) }
    }

    func testAlteredSignedVerdictIsSignatureInvalid() async throws {
        // Re-encrypting is possible for whoever has the decryption key; the signature still binds the verdict.
        let signed = try keys.signedVerdict(PlayVerdictPayload().json)
        var parts = signed.split(separator: ".").map(String.init)
        var forged = PlayVerdictPayload()
        forged.deviceVerdicts = ["MEETS_STRONG_INTEGRITY"]
        parts[1] = Base64URL.encode(StrictJSON.serialize(forged.json))
        let token = try PlayIntegrityTestKeys.encrypt(Array(parts.joined(separator: ".").utf8), with: keys.decryptionKey)
        await assertPlayRefused(.signatureInvalid) { try await self.keys.verifier().verify(token, policy: .testApp(), at: self.time) }
    }

    func testMalformedTokensAndVerdicts() async throws {
        let verifier = try keys.verifier()
        let valid = try keys.token(PlayVerdictPayload().json)
        let notJWE = [
            "", "not a token", valid + ".x", String(valid.split(separator: ".").prefix(3).joined(separator: ".")),
            String(repeating: "A", count: PlayIntegrityToken.maxSize + 1), valid + "=",
        ]
        for token in notJWE {
            await assertPlayRefused(.malformed, String(token.prefix(40))) { try await verifier.verify(token, policy: .testApp(), at: self.time) }
        }
        let notJWS = try PlayIntegrityTestKeys.encrypt(Array("{\"requestDetails\":{}}".utf8), with: keys.decryptionKey)
        await assertPlayRefused(.malformed, "plaintext not a JWS") { try await verifier.verify(notJWS, policy: .testApp(), at: self.time) }
        let notText = try PlayIntegrityTestKeys.encrypt([0xFF, 0xFE, 0x2E, 0x2E], with: keys.decryptionKey)
        await assertPlayRefused(.malformed, "plaintext not UTF-8") { try await verifier.verify(notText, policy: .testApp(), at: self.time) }

        var missing = PlayVerdictPayload().json
        missing["requestDetails"] = nil
        var wrongType = PlayVerdictPayload()
        wrongType.timestampMillis = "yesterday"
        var fraction = PlayVerdictPayload()
        fraction.timestampMillis = .number(1.5)
        var noRecognition = PlayVerdictPayload()
        noRecognition.appRecognitionVerdict = nil
        var arrayOfNumbers = PlayVerdictPayload().json
        arrayOfNumbers["deviceIntegrity"] = .object(["deviceRecognitionVerdict": [1, 2]])
        for (name, payload) in [("no requestDetails", missing), ("timestamp text", wrongType.json), ("timestamp 1.5", fraction.json),
                                ("no app verdict", noRecognition.json), ("numbers as verdicts", arrayOfNumbers)] {
            await assertPlayRefused(.malformed, name) { try await verifier.verify(self.keys.token(payload), policy: .testApp(), at: self.time) }
        }
    }

    /// The reason is the first failed check's: a token wrong in every way is refused for its request package.
    func testFirstFailedCheckIsReported() async throws {
        var payload = PlayVerdictPayload()
        payload.deviceVerdicts = nil
        payload.appRecognitionVerdict = "UNEVALUATED"
        payload.timestampMillis = "0"
        payload.nonce = "bm9wZQ"
        await assertPlayRefused(.nonceMismatch) { try await self.verify(payload) }
        payload.requestPackageName = "com.example.other"
        await assertPlayRefused(.appIdentityMismatch) { try await self.verify(payload) }
        payload.requestPackageName = PlayVerdictPayload.package
        payload.nonce = PlayVerdictPayload.nonce
        await assertPlayRefused(.stale) { try await self.verify(payload) }
    }

    // MARK: Keys as Play Console gives them

    func testKeysMustReadAsPlayConsoleWritesThem() throws {
        let good = PlayIntegrityTestKeys()
        XCTAssertNoThrow(try PlayIntegrityVerifier(decryptionKey: good.decryptionKeyBase64 + "\n", verificationKey: " " + good.verificationKeyBase64))
        // An Ed25519 SubjectPublicKeyInfo (RFC 8410): a key KeywardJOSE reads, but not one ES256 verifies with.
        let ed25519SPKI = Data([0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00]
            + Curve25519.Signing.PrivateKey().publicKey.rawRepresentation).base64EncodedString()
        let refused: [(String, String, String)] = [
            ("short decryption key", Data(good.decryptionKey.prefix(16)).base64EncodedString(), good.verificationKeyBase64),
            ("decryption key not base64", "not base64!", good.verificationKeyBase64),
            ("verification key not base64", good.decryptionKeyBase64, "%%%"),
            ("verification key not a key", good.decryptionKeyBase64, Data(repeating: 1, count: 91).base64EncodedString()),
            ("verification key Ed25519", good.decryptionKeyBase64, ed25519SPKI),
            ("verification key P-384", good.decryptionKeyBase64, P384.Signing.PrivateKey().publicKey.derRepresentation.base64EncodedString()),
        ]
        for (name, decryption, verification) in refused {
            XCTAssertThrowsError(try PlayIntegrityVerifier(decryptionKey: decryption, verificationKey: verification), name) { error in
                XCTAssertEqual((error as? AttestationFailure)?.reason, .malformed, name)
            }
        }
    }
}
