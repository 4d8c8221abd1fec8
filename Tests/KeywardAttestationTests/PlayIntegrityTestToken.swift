import Crypto
import Foundation
import KeywardAttestation
import KeywardJOSE
import XCTest

/// An app's Play Integrity response keys made for the test, as Play Console would give them, and tokens minted
/// with them the way Google mints them: the verdict signed ES256 (through KeywardJOSE's signer), the JWS encrypted
/// A256KW + A256GCM (with swift-crypto). `PlayIntegrityJoserfcTests` mints with joserfc instead.
struct PlayIntegrityTestKeys {
    let decryptionKey: [UInt8]
    let signingKey: P256.Signing.PrivateKey

    init() {
        decryptionKey = Array(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
        signingKey = P256.Signing.PrivateKey()
    }

    /// Standard base64 of the 32 bytes, as Play Console shows the decryption key.
    var decryptionKeyBase64: String { Data(decryptionKey).base64EncodedString() }
    /// Standard base64 of the SubjectPublicKeyInfo DER, as Play Console shows the verification key.
    var verificationKeyBase64: String { signingKey.publicKey.derRepresentation.base64EncodedString() }

    func verifier() throws -> PlayIntegrityVerifier {
        try PlayIntegrityVerifier(decryptionKey: decryptionKeyBase64, verificationKey: verificationKeyBase64)
    }

    /// The JWS Google signs: `{"alg":"ES256"}` over the verdict.
    func signedVerdict(_ payload: JSONObject) throws -> String {
        let key = try SigningKey(algorithm: .es256, serialized: Array(signingKey.derRepresentation))
        return try JWS.sign(header: [:], claims: payload, key: key)
    }

    func token(_ payload: JSONObject) throws -> String {
        try Self.encrypt(Array(signedVerdict(payload).utf8), with: decryptionKey)
    }

    /// A compact JWE, A256KW + A256GCM, with a fresh content key and IV.
    static func encrypt(_ plaintext: [UInt8], with keyEncryptionKey: [UInt8]) throws -> String {
        let header = Base64URL.encode(Array(#"{"alg":"A256KW","enc":"A256GCM"}"#.utf8))
        let contentKey = SymmetricKey(size: .bits256)
        let wrapped = try AES.KeyWrap.wrap(contentKey, using: SymmetricKey(data: keyEncryptionKey))
        let box = try AES.GCM.seal(plaintext, using: contentKey, authenticating: Array(header.utf8))
        return [header, Base64URL.encode(wrapped), Base64URL.encode(box.nonce), Base64URL.encode(box.ciphertext), Base64URL.encode(box.tag)]
            .joined(separator: ".")
    }
}

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
