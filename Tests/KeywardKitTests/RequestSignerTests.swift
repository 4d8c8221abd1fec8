// Tests: the signed device request format byte for byte, with device keys and App Attest assertions.
import Crypto
import Foundation
import KeywardJOSE
import KeywardKit
import Synchronization
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The signed-request format byte for byte (README, "Signed device requests"), each signature checked with
/// swift-crypto against a message this test builds itself.
final class RequestSignerTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_900_000_000.75)

    func signer(_ key: HardwareStyleSigner, offset: Int64 = 0) throws -> RequestSigner {
        let now = now
        return try RequestSigner(appId: "com.example.kit", deviceId: "device-1", key: key, clockOffsetMs: offset, clock: { now })
    }

    func testTheSixHeadersAndTheSignedBytes() async throws {
        let key = try HardwareStyleSigner()
        let body = Array(#"{"challenge":"c","new_public_key":"k"}"#.utf8)
        let headers = try await signer(key).sign(method: "post", target: "/realms/demo/v1/device/rotate-key?trace=a%20b", body: body)

        XCTAssertEqual(headers.fields.map(\.name), [
            "X-App-ID", "X-Device-ID", "X-Keyward-Timestamp", "X-Keyward-Nonce", "X-Keyward-Sig-Version", "X-Keyward-Signature",
        ])
        XCTAssertEqual(headers.appId, "com.example.kit")
        XCTAssertEqual(headers.deviceId, "device-1")
        XCTAssertEqual(headers.timestamp, "1900000000", "whole seconds, rounded down")
        XCTAssertEqual(headers.version, "1")
        XCTAssertNotNil(UUID(uuidString: headers.nonce), "the nonce is a UUID")

        let digest = SHA256.hash(data: body).map { String(format: "%02x", $0) }.joined()
        let expected = "POST\n/realms/demo/v1/device/rotate-key?trace=a%20b\n1900000000\n\(headers.nonce)\n\(digest)"
        let message = RequestSigner.message(method: "post", target: "/realms/demo/v1/device/rotate-key?trace=a%20b", timestamp: "1900000000", nonce: headers.nonce, body: body)
        XCTAssertEqual(String(decoding: message, as: UTF8.self), expected)
        XCTAssertEqual(message, Array(expected.utf8))
        let der = try XCTUnwrap(Data(base64Encoded: headers.signature))
        XCTAssertEqual(der.first, 0x30, "DER: a SEQUENCE of r and s, not the 64 raw bytes")
        let signature = try P256.Signing.ECDSASignature(derRepresentation: der)
        XCTAssertTrue(key.key.publicKey.isValidSignature(signature, for: Array(expected.utf8)))
        XCTAssertFalse(key.key.publicKey.isValidSignature(signature, for: Array(expected.replacingOccurrences(of: "POST", with: "GET").utf8)))
    }

    func testAnEmptyBodyIsTheDigestOfNothing() {
        let message = RequestSigner.message(method: "GET", target: "/v1/device/status", timestamp: "1", nonce: "n", body: [])
        XCTAssertEqual(
            String(decoding: message, as: UTF8.self),
            "GET\n/v1/device/status\n1\nn\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        )
    }

    func testEveryRequestHasANewNonceAndTheLearnedOffsetMovesTheTimestamp() async throws {
        let key = try HardwareStyleSigner()
        let first = try await signer(key).sign(method: "GET", target: "/")
        let second = try await signer(key).sign(method: "GET", target: "/")
        XCTAssertNotEqual(first.nonce, second.nonce)
        XCTAssertNotEqual(first.signature, second.signature)

        let ahead = try await signer(key, offset: 3_600_500).sign(method: "GET", target: "/")
        XCTAssertEqual(ahead.timestamp, "1900003601")
        let behind = try await signer(key, offset: -1_500).sign(method: "GET", target: "/")
        XCTAssertEqual(behind.timestamp, "1899999999")
        XCTAssertEqual(try signer(key, offset: 249).timestamp(), 1_900_000_000)
        XCTAssertEqual(try signer(key, offset: 250).timestamp(), 1_900_000_001)
        // An offset from a damaged state file gives an absurd timestamp (refused by the server), not a trap.
        XCTAssertGreaterThan(try signer(key, offset: .max).timestamp(), 1_000_000_000_000_000)
        XCTAssertLessThan(try signer(key, offset: .min).timestamp(), -1_000_000_000_000_000)
    }

    func testOnlyES256KeysSign() async throws {
        for algorithm in [JWSAlgorithm.es384, .rs256, .edDSA] {
            XCTAssertThrowsError(try RequestSigner(appId: "a", deviceId: "d", key: try SigningKey.generate(algorithm)), "\(algorithm)") { error in
                guard case .unusableKey? = error as? KeywardKitError else { return XCTFail("\(error)") }
            }
        }
        // A software ES256 key signs like the hardware-style one.
        let software = try SigningKey.generate(.es256)
        let headers = try await RequestSigner(appId: "a", deviceId: "d", key: software).sign(method: "GET", target: "/")
        let message = RequestSigner.message(method: "GET", target: "/", timestamp: headers.timestamp, nonce: headers.nonce, body: [])
        guard case .ec(_, let x, let y) = software.publicJWK.material else { return XCTFail("not an EC key") }
        let publicKey = try P256.Signing.PublicKey(x963Representation: [0x04] + x + y)
        XCTAssertTrue(publicKey.isValidSignature(try P256.Signing.ECDSASignature(derRepresentation: Data(base64Encoded: headers.signature)!), for: message))
    }

    func testTheTargetIsThePathAndQueryAsSent() throws {
        XCTAssertEqual(RequestSigner.target(of: try XCTUnwrap(URL(string: "http://127.0.0.1:8080/realms/demo/v1/device/status"))), "/realms/demo/v1/device/status")
        XCTAssertEqual(RequestSigner.target(of: try XCTUnwrap(URL(string: "https://id.example.com/v1/items?page=2&q=a%2Fb"))), "/v1/items?page=2&q=a%2Fb")
        XCTAssertEqual(RequestSigner.target(of: try XCTUnwrap(URL(string: "https://id.example.com/a%20b/c"))), "/a%20b/c")
        XCTAssertEqual(RequestSigner.target(of: try XCTUnwrap(URL(string: "https://id.example.com"))), "/")
    }

    func testHeadersGoOntoARequest() async throws {
        let headers = try await signer(try HardwareStyleSigner()).sign(method: "GET", target: "/")
        var request = URLRequest(url: try XCTUnwrap(URL(string: "https://id.example.com/")))
        request.setValue("stale", forHTTPHeaderField: "X-Keyward-Nonce")
        headers.apply(to: &request)
        for field in headers.fields {
            XCTAssertEqual(request.value(forHTTPHeaderField: field.name), field.value)
        }
    }

    /// An App Attest signer hands the asserter the SHA-256 of the same message a device key would sign, and sends
    /// what it answers, as it is, under version `appattest-1`.
    func testAnAppAttestSignerSendsTheAssertionOverTheMessagesDigest() async throws {
        let asserter = RecordingAsserter()
        let now = now
        let signer = RequestSigner(
            appId: "com.example.kit", deviceId: "device-1", appAttestKeyId: "a2V5LWlk", asserter: asserter, clockOffsetMs: 1_000, clock: { now }
        )
        XCTAssertEqual(signer.version, "appattest-1")
        let body = Array(#"{"a":1}"#.utf8)
        let headers = try await signer.sign(method: "POST", target: "/realms/demo/v1/items?x=1", body: body)
        XCTAssertEqual(headers.version, "appattest-1")
        XCTAssertEqual(headers.fields.first { $0.name == "X-Keyward-Sig-Version" }?.value, "appattest-1")
        XCTAssertEqual(headers.timestamp, "1900000001")

        let message = RequestSigner.message(method: "POST", target: "/realms/demo/v1/items?x=1", timestamp: headers.timestamp, nonce: headers.nonce, body: body)
        let calls = asserter.calls.withLock { $0 }
        XCTAssertEqual(calls.count, 1)
        XCTAssertEqual(calls.first?.keyId, "a2V5LWlk")
        XCTAssertEqual(calls.first?.clientDataHash, Array(SHA256.hash(data: message)))
        XCTAssertEqual(headers.signature, Data(RecordingAsserter.assertion(calls[0].clientDataHash)).base64EncodedString())
    }

    func testAnAsserterErrorReachesTheCaller() async throws {
        struct Refused: Error {}
        let signer = RequestSigner(appId: "a", deviceId: "d", appAttestKeyId: "k", asserter: FailingAsserter(error: Refused()))
        do {
            _ = try await signer.sign(method: "GET", target: "/")
            XCTFail("signed without an assertion")
        } catch {
            XCTAssertTrue(error is Refused, "\(error)")
        }
    }
}

/// Answers a fixed function of the digest, and records each call.
final class RecordingAsserter: Asserter {
    let calls = Mutex<[(keyId: String, clientDataHash: [UInt8])]>([])

    static func assertion(_ clientDataHash: [UInt8]) -> [UInt8] { [0xA2] + clientDataHash }

    func assertion(keyId: String, clientDataHash: [UInt8]) async throws -> [UInt8] {
        calls.withLock { $0.append((keyId, clientDataHash)) }
        return Self.assertion(clientDataHash)
    }
}

struct FailingAsserter: Asserter {
    let error: any Error & Sendable

    func assertion(keyId: String, clientDataHash: [UInt8]) async throws -> [UInt8] { throw error }
}
