// Test support: Play Integrity verdict payloads shaped as Google writes them, a test policy, a refusal check.
import AttestationTestSupport
import Crypto
import Foundation
import KeywardAttestation
import KeywardJOSE
import XCTest

/// A verdict payload shaped as Google writes it (64-bit integers as strings), every field settable.
struct PlayVerdictPayload {
    static let package = "com.example.keyward"
    /// A binding nonce as the server computes it: base64url without padding of 32 bytes chosen so that the standard
    /// alphabet writes them with '+' and '/'.
    static let nonceBytes: [UInt8] = (0..<32).map { UInt8(0xF8 | ($0 % 8)) }
    static var nonce: String { Base64URL.encode(nonceBytes) }
    /// The time the tests verify at, and the default request time 20 s before it.
    static let verificationTime = Date(timeIntervalSince1970: 1_795_000_000)
    static let certificateDigest: [UInt8] = Array(SHA256.hash(data: Array("the app's signing certificate".utf8)))

    var requestPackageName: String? = package
    var nonce: String? = PlayVerdictPayload.nonce
    var requestHash: String?
    var timestampMillis: JSONValue? = .string(String(Int64((verificationTime.timeIntervalSince1970 - 20) * 1000)))
    var appRecognitionVerdict: String? = "PLAY_RECOGNIZED"
    var packageName: String? = package
    var certificateDigests: [String]? = [Base64URL.encode(certificateDigest)]
    var versionCode: String? = "42"
    /// nil: no deviceIntegrity object at all.
    var deviceVerdicts: [String]? = ["MEETS_DEVICE_INTEGRITY"]
    var licensing: String? = "LICENSED"

    var json: JSONObject {
        var request: JSONObject = [:]
        request["requestPackageName"] = requestPackageName.map(JSONValue.string)
        request["nonce"] = nonce.map(JSONValue.string)
        request["requestHash"] = requestHash.map(JSONValue.string)
        request["timestampMillis"] = timestampMillis
        var app: JSONObject = [:]
        app["appRecognitionVerdict"] = appRecognitionVerdict.map(JSONValue.string)
        app["packageName"] = packageName.map(JSONValue.string)
        app["certificateSha256Digest"] = certificateDigests.map { .array($0.map(JSONValue.string)) }
        app["versionCode"] = versionCode.map(JSONValue.string)
        var payload: JSONObject = ["requestDetails": .object(request), "appIntegrity": .object(app)]
        if let deviceVerdicts {
            // Google leaves an empty verdict list out.
            payload["deviceIntegrity"] = deviceVerdicts.isEmpty ? .object([:]) : .object(["deviceRecognitionVerdict": .array(deviceVerdicts.map(JSONValue.string))])
        }
        if let licensing {
            payload["accountDetails"] = .object(["appLicensingVerdict": .string(licensing)])
        }
        return payload
    }
}

extension PlayIntegrityPolicy {
    /// The production policy for the test app and nonce.
    static func testApp(allowedCertificateDigests: Set<[UInt8]> = [PlayVerdictPayload.certificateDigest]) -> PlayIntegrityPolicy {
        PlayIntegrityPolicy(
            packageNames: [PlayVerdictPayload.package], expectedNonce: PlayVerdictPayload.nonce,
            allowedCertificateDigests: allowedCertificateDigests
        )
    }
}

/// Runs a verification that must be refused with `reason`.
func assertPlayRefused(
    _ reason: AttestationReason, _ context: String = "", file: StaticString = #filePath, line: UInt = #line,
    _ verification: () async throws -> PlayIntegrityResult
) async {
    do {
        let result = try await verification()
        XCTFail("verified (\(result.checks.map(\.name))), expected \(reason.rawValue) \(context)", file: file, line: line)
    } catch let failure as AttestationFailure {
        XCTAssertEqual(failure.reason, reason, "\(context) \(failure.detail)", file: file, line: line)
    } catch {
        XCTFail("not an AttestationFailure: \(error) \(context)", file: file, line: line)
    }
}
