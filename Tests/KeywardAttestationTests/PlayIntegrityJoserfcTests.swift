// Tests: Play Integrity tokens minted by Python's joserfc verify, and are refused for the same reasons as our own.
import AttestationTestSupport
import Crypto
import Foundation
import KeywardAttestation
import KeywardJOSE
import XCTest

/// Play Integrity tokens minted by an independent implementation, Python's joserfc (tests/jose/joserfc_jwe_peer.py),
/// from verdicts written by Python's json module: the verifier reads another JOSE stack's JWE and JWS, and refuses
/// them for the same reasons as its own.
final class PlayIntegrityJoserfcTests: XCTestCase {
    func testTokensMintedByJoserfcVerifyAndAreRefusedForTheirReasons() async throws {
        let keys = PlayIntegrityTestKeys()
        let time = PlayVerdictPayload.verificationTime
        var wrongNonce = PlayVerdictPayload()
        wrongNonce.nonce = Base64URL.encode(Array(SHA256.hash(data: Array("another registration".utf8))))
        var stale = PlayVerdictPayload()
        stale.timestampMillis = .string(String(Int64((time.timeIntervalSince1970 - 3600) * 1000)))
        var wrongPackage = PlayVerdictPayload()
        wrongPackage.requestPackageName = "com.example.other"
        var unrecognized = PlayVerdictPayload()
        unrecognized.appRecognitionVerdict = "UNRECOGNIZED_VERSION"
        var noDevice = PlayVerdictPayload()
        noDevice.deviceVerdicts = nil
        var padded = PlayVerdictPayload()
        padded.nonce = Data(PlayVerdictPayload.nonceBytes).base64EncodedString()
        let cases: [(String, PlayVerdictPayload, AttestationReason?)] = [
            ("valid", PlayVerdictPayload(), nil), ("padded standard nonce", padded, nil),
            ("wrong nonce", wrongNonce, .nonceMismatch), ("stale", stale, .stale), ("wrong package", wrongPackage, .appIdentityMismatch),
            ("unrecognized app", unrecognized, .appNotRecognized), ("no device verdict", noDevice, .deviceIntegrityRefused),
        ]
        let tokens = try mint(cases.map(\.1.json), keys: keys)
        XCTAssertEqual(tokens.count, cases.count)
        let verifier = try keys.verifier()
        for ((name, payload, reason), token) in zip(cases, tokens) {
            if let reason {
                await assertPlayRefused(reason, name) { try await verifier.verify(token, policy: .testApp(), at: time) }
            } else {
                let result = try await verifier.verify(token, policy: .testApp(), at: time)
                XCTAssertEqual(result.verdict.nonce, payload.nonce, name)
                XCTAssertEqual(result.verdict.versionCode, 42, name)
            }
        }

        // The same joserfc tokens under another app's keys.
        let other = PlayIntegrityTestKeys()
        let wrongDecryption = try PlayIntegrityVerifier(decryptionKey: other.decryptionKeyBase64, verificationKey: keys.verificationKeyBase64)
        await assertPlayRefused(.undecryptable) { try await wrongDecryption.verify(tokens[0], policy: .testApp(), at: time) }
        let wrongVerification = try PlayIntegrityVerifier(decryptionKey: keys.decryptionKeyBase64, verificationKey: other.verificationKeyBase64)
        await assertPlayRefused(.signatureInvalid) { try await wrongVerification.verify(tokens[0], policy: .testApp(), at: time) }
    }

    /// One token per payload, from the peer's `play-integrity` command.
    private func mint(_ payloads: [JSONObject], keys: PlayIntegrityTestKeys) throws -> [String] {
        let request: JSONObject = [
            "decryption_key": .string(keys.decryptionKeyBase64),
            "signing_key_pem": .string(keys.signingKey.pemRepresentation),
            "payloads": .array(payloads.map(JSONValue.object)),
        ]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.python())
        process.arguments = [Self.peerScript.path, "play-integrity"]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data(StrictJSON.serialize(request)))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            XCTFail("joserfc_jwe_peer.py exited \(process.terminationStatus): \(stderr)")
            return []
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// The Python with joserfc (CI's .venv, `bash .ci/run venv`). Unset is a failure, not a skip.
    private static func python() throws -> String {
        guard let python = ProcessInfo.processInfo.environment["KEYWARD_TEST_PYTHON"], !python.isEmpty else {
            XCTFail("KEYWARD_TEST_PYTHON is not set: point it at a Python with joserfc (bash .ci/run venv sets it to .venv/bin/python)")
            throw CocoaError(.executableNotLoadable)
        }
        return python
    }

    /// Tests/KeywardAttestationTests/ → repository root.
    private static var peerScript: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("tests/jose/joserfc_jwe_peer.py")
    }
}
