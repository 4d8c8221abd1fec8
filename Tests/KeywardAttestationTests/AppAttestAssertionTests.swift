// Tests: App Attest assertions: real vectors verify once with their attested key; replays and tampering refused.
import AttestationTestSupport
import Crypto
import Foundation
import KeywardAttestation
import KeywardCBOR
import XCTest

/// App Attest assertions: each real vector's first assertion with the key its attestation certified, replays,
/// and assertions made in the test for what iOS 14 never sends (a trailer after the 37-byte head).
final class AppAttestAssertionTests: XCTestCase {
    private func attestedKey(_ vector: AppAttestVector) async throws -> P256.Signing.PublicKey {
        try await AppAttestVerifier(appID: vector.appID, environment: .development).verifyAttestation(
            vector.attestation, clientDataHash: Array(SHA256.hash(data: vector.attestationClientData)), at: vector.attestedAt
        ).publicKey
    }

    private func assertRefused(
        _ reason: AttestationReason, file: StaticString = #filePath, line: UInt = #line,
        _ verification: () throws -> AppAttestAssertion
    ) {
        do {
            let result = try verification()
            XCTFail("verified (counter \(result.counter)), expected \(reason.rawValue)", file: file, line: line)
        } catch let failure as AttestationFailure {
            XCTAssertEqual(failure.reason, reason, failure.detail, file: file, line: line)
        } catch {
            XCTFail("not an AttestationFailure: \(error)", file: file, line: line)
        }
    }

    func testEveryRealAssertionVerifiesWithItsAttestedKeyOnceOnly() async throws {
        for vector in try AppAttestVector.all() {
            let verifier = AppAttestVerifier(appID: vector.appID, environment: .development)
            let key = try await attestedKey(vector)
            XCTAssertEqual(vector.assertionCounter, 1)
            let result = try verifier.verifyAssertion(
                vector.assertion, clientData: .data(vector.assertionClientData), publicKey: key, previousCounter: vector.assertionCounter - 1
            )
            XCTAssertEqual(result.counter, vector.assertionCounter, vector.name)
            XCTAssertEqual(result.trailingByteCount, 0)
            // The same with the hash given instead of the data.
            let byHash = try verifier.verifyAssertion(
                vector.assertion, clientData: .hash(Array(SHA256.hash(data: vector.assertionClientData))), publicKey: key,
                previousCounter: vector.assertionCounter - 1
            )
            XCTAssertEqual(byHash.counter, result.counter)
            // Replayed: the stored counter is now the assertion's own.
            assertRefused(.counterNotIncreasing) {
                try verifier.verifyAssertion(vector.assertion, clientData: .data(vector.assertionClientData), publicKey: key, previousCounter: vector.assertionCounter)
            }
            assertRefused(.counterNotIncreasing) {
                try verifier.verifyAssertion(vector.assertion, clientData: .data(vector.assertionClientData), publicKey: key, previousCounter: 1000)
            }
        }
    }

    func testOtherClientDataOrAnotherKeyBreakTheSignature() async throws {
        let vectors = try AppAttestVector.all()
        let verifier = AppAttestVerifier(appID: vectors[0].appID, environment: .development)
        let key = try await attestedKey(vectors[0])
        assertRefused(.signatureInvalid) {
            try verifier.verifyAssertion(vectors[0].assertion, clientData: .data(Array("wurzel".utf8)), publicKey: key, previousCounter: 0)
        }
        let otherKey = try await attestedKey(vectors[1])
        assertRefused(.signatureInvalid) {
            try verifier.verifyAssertion(vectors[0].assertion, clientData: .data(vectors[0].assertionClientData), publicKey: otherKey, previousCounter: 0)
        }
        assertRefused(.malformed) {
            try verifier.verifyAssertion(vectors[0].assertion, clientData: .hash([1, 2, 3]), publicKey: key, previousCounter: 0)
        }
    }

    /// The device signs SHA-256(nonce): verifying the nonce as a prehashed digest fails on real data, which is
    /// why the verifier hands the nonce over as a message.
    func testTheNonceIsSignedAsAMessageNotAsADigest() async throws {
        let vector = try XCTUnwrap(AppAttestVector.all().first)
        let key = try await attestedKey(vector)
        let assertion = try CBORReader.decode(vector.assertion)
        let authenticatorData = try XCTUnwrap(assertion["authenticatorData"]?.bytesValue)
        let signature = try P256.Signing.ECDSASignature(derRepresentation: try XCTUnwrap(assertion["signature"]?.bytesValue))
        let nonce = SHA256.hash(data: authenticatorData + Array(SHA256.hash(data: vector.assertionClientData)))
        XCTAssertTrue(key.isValidSignature(signature, for: Data(nonce)))
        XCTAssertFalse(key.isValidSignature(signature, for: nonce))
    }

    func testAnotherAppIsRefused() async throws {
        let vector = try XCTUnwrap(AppAttestVector.all().first)
        let key = try await attestedKey(vector)
        assertRefused(.rpIdMismatch) {
            try AppAttestVerifier(appID: "ABCDE12345.de.vincent-haupert.apple-appattest-poc", environment: .development)
                .verifyAssertion(vector.assertion, clientData: .data(vector.assertionClientData), publicKey: key, previousCounter: 0)
        }
    }

    // MARK: Assertions made in the test

    private func assertion(
        key: P256.Signing.PrivateKey, appID: String, counter: UInt32, clientData: [UInt8], trailer: [UInt8] = []
    ) throws -> [UInt8] {
        try ForgedAppAttestation.assertion(key: key, appID: appID, counter: counter, clientData: clientData, trailer: trailer)
    }

    /// Newer iOS versions append a CBOR map (and set the AT flag) in assertions too: covered by the signature,
    /// never a reason to refuse.
    func testAuthenticatorDataLongerThanItsHeadIsSignedWhole() throws {
        let key = P256.Signing.PrivateKey(), appID = "ABCDE12345.com.example.app", clientData = Array("challenge-1".utf8)
        let trailer = CBORValue.map([CBORMapEntry(.text("apple_bundle_version_01"), .text("1"))]).encoded
        let verifier = AppAttestVerifier(appID: appID, environment: .production)
        let made = try assertion(key: key, appID: appID, counter: 7, clientData: clientData, trailer: trailer)
        let result = try verifier.verifyAssertion(made, clientData: .data(clientData), publicKey: key.publicKey, previousCounter: 6)
        XCTAssertEqual(result.counter, 7)
        XCTAssertEqual(result.trailingByteCount, trailer.count)

        // The trailer is signed: changing it breaks the signature.
        var decoded = try XCTUnwrap(CBORReader.decode(made).mapEntries)
        var authenticatorData = try XCTUnwrap(decoded[1].value.bytesValue)
        authenticatorData[authenticatorData.count - 1] ^= 0x01
        decoded[1] = CBORMapEntry(decoded[1].key, .bytes(authenticatorData))
        assertRefused(.signatureInvalid) {
            try verifier.verifyAssertion(CBORValue.map(decoded).encoded, clientData: .data(clientData), publicKey: key.publicKey, previousCounter: 6)
        }
    }

    func testCountersCompareAsUnsigned32BitNumbers() throws {
        let key = P256.Signing.PrivateKey(), appID = "ABCDE12345.com.example.app", clientData = Array("c".utf8)
        let verifier = AppAttestVerifier(appID: appID, environment: .production)
        let top = try assertion(key: key, appID: appID, counter: UInt32.max, clientData: clientData)
        XCTAssertEqual(try verifier.verifyAssertion(top, clientData: .data(clientData), publicKey: key.publicKey, previousCounter: UInt32.max - 1).counter, UInt32.max)
        assertRefused(.counterNotIncreasing) {
            try verifier.verifyAssertion(top, clientData: .data(clientData), publicKey: key.publicKey, previousCounter: UInt32.max)
        }
    }

    func testMalformedAssertionsAreRefusedAsSuch() throws {
        let key = P256.Signing.PrivateKey(), appID = "ABCDE12345.com.example.app", clientData = Array("c".utf8)
        let verifier = AppAttestVerifier(appID: appID, environment: .production)
        let good = try CBORReader.decode(try assertion(key: key, appID: appID, counter: 1, clientData: clientData))
        let signature = try XCTUnwrap(good["signature"]), authenticatorData = try XCTUnwrap(good["authenticatorData"]?.bytesValue)
        let shapes: [String: [UInt8]] = [
            "not CBOR": [0xFF],
            "an array": CBORValue.array([signature]).encoded,
            "no signature": CBORValue.map([CBORMapEntry(.text("authenticatorData"), .bytes(authenticatorData))]).encoded,
            "signature as text": CBORValue.map([
                CBORMapEntry(.text("signature"), .text("sig")), CBORMapEntry(.text("authenticatorData"), .bytes(authenticatorData)),
            ]).encoded,
            "36-byte authenticatorData": CBORValue.map([
                CBORMapEntry(.text("signature"), signature), CBORMapEntry(.text("authenticatorData"), .bytes(Array(authenticatorData.prefix(36)))),
            ]).encoded,
            "raw r||s signature": CBORValue.map([
                CBORMapEntry(.text("signature"), .bytes([UInt8](repeating: 1, count: 64))), CBORMapEntry(.text("authenticatorData"), .bytes(authenticatorData)),
            ]).encoded,
        ]
        for (name, bytes) in shapes {
            do {
                _ = try verifier.verifyAssertion(bytes, clientData: .data(clientData), publicKey: key.publicKey, previousCounter: 0)
                XCTFail("\(name) verified")
            } catch {
                XCTAssertEqual(error.reason, .malformed, "\(name): \(error)")
            }
        }
    }
}
