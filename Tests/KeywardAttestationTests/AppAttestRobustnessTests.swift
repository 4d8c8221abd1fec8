// Tests: truncated and bit-flipped App Attest vectors are refused with a reason, unless only the receipt changed.
import Crypto
import Foundation
import KeywardAttestation
import KeywardCBOR
import XCTest

/// Truncations and bit flips of every real vector: each one is refused with a reason or, only where the change is
/// in a part nothing signs (the receipt, which Keyward stores but does not verify), verified with the same result.
/// None traps.
final class AppAttestRobustnessTests: XCTestCase {
    private func firstIndex(of part: [UInt8], in bytes: [UInt8]) -> Int? {
        guard part.count <= bytes.count else { return nil }
        return (0...(bytes.count - part.count)).first { bytes[$0..<($0 + part.count)].elementsEqual(part) }
    }

    func testEveryPrefixOfEveryAttestationIsRefused() async throws {
        for vector in try AppAttestVector.all() {
            let verifier = AppAttestVerifier(appID: vector.appID, environment: .development)
            let hash = Array(SHA256.hash(data: vector.attestationClientData))
            for end in 0..<vector.attestation.count {
                do {
                    _ = try await verifier.verifyAttestation(Array(vector.attestation.prefix(end)), clientDataHash: hash, at: vector.attestedAt)
                    XCTFail("\(vector.name): the first \(end) bytes verified")
                } catch {
                    XCTAssertEqual(error.reason, .malformed)
                }
            }
        }
    }

    /// One flipped bit per byte position (the bit rotating with the position); inside the long receipt every
    /// seventeenth byte, to keep the run short, since each of those flips costs a whole chain verification.
    func testBitFlipsAreRefusedUnlessTheyHitTheUnsignedReceipt() async throws {
        for vector in try AppAttestVector.all() {
            let verifier = AppAttestVerifier(appID: vector.appID, environment: .development)
            let hash = Array(SHA256.hash(data: vector.attestationClientData))
            let original = try await verifier.verifyAttestation(vector.attestation, clientDataHash: hash, at: vector.attestedAt)
            let receiptStart = try XCTUnwrap(firstIndex(of: original.receipt, in: vector.attestation))
            let receipt = receiptStart..<(receiptStart + original.receipt.count)
            var verified = 0
            for position in vector.attestation.indices where !receipt.contains(position) || position % 17 == 0 {
                var mutated = vector.attestation
                mutated[position] ^= 1 << UInt8(position % 8)
                do {
                    let result = try await verifier.verifyAttestation(mutated, clientDataHash: hash, at: vector.attestedAt)
                    XCTAssertTrue(receipt.contains(position), "\(vector.name): a flip at \(position), outside the receipt, verified")
                    XCTAssertEqual(result.keyID, original.keyID)
                    XCTAssertNotEqual(result.receipt, original.receipt)
                    verified += 1
                } catch {
                    XCTAssertNotEqual(error.detail, "", "\(vector.name): flip at \(position)")
                }
            }
            XCTAssertGreaterThan(verified, 0, "receipt flips verify: the receipt is not checked")
        }
    }

    /// Found by the app-attest fuzzer: the leaf's signature BIT STRING claiming unused bits (the same signature bytes
    /// under another encoding) verified, so a chain other than the one the device sent was accepted. A signature
    /// that is not whole bytes is refused, in every certificate of the chain and for every count of unused bits.
    func testASignatureThatIsNotWholeBytesIsRefused() async throws {
        for vector in try AppAttestVector.all() {
            let verifier = AppAttestVerifier(appID: vector.appID, environment: .development)
            let hash = Array(SHA256.hash(data: vector.attestationClientData))
            let object = try AppAttestAttestationObject(cbor: vector.attestation)
            for (index, certificate) in object.certificatesDER.enumerated() {
                let start = try XCTUnwrap(firstIndex(of: certificate, in: vector.attestation), "\(vector.name): certificate \(index + 1)")
                // The signature BIT STRING is the certificate's last element: tag, a one-byte length, unused bits.
                let length = try XCTUnwrap((1..<128).first { certificate[certificate.count - $0 - 2] == 0x03 && Int(certificate[certificate.count - $0 - 1]) == $0 })
                let unusedBitsAt = start + certificate.count - length
                XCTAssertEqual(vector.attestation[unusedBitsAt], 0)
                for unused in UInt8(1)...7 {
                    var mutated = vector.attestation
                    mutated[unusedBitsAt] = unused
                    do {
                        _ = try await verifier.verifyAttestation(mutated, clientDataHash: hash, at: vector.attestedAt)
                        XCTFail("\(vector.name): certificate \(index + 1) verified with \(unused) unused signature bits")
                    } catch {
                        XCTAssertEqual(error.reason, .malformed, "\(vector.name): \(error)")
                    }
                }
            }
        }
    }

    /// authData rewritten inside an otherwise intact object: every prefix and every flipped byte is refused,
    /// because all of authData is under the certified nonce. A change to a field the policy reads is refused by
    /// that field's check, which runs before the chain and the nonce.
    func testEveryChangeToAuthDataIsRefused() async throws {
        for vector in try AppAttestVector.all() {
            let verifier = AppAttestVerifier(appID: vector.appID, environment: .development)
            let hash = Array(SHA256.hash(data: vector.attestationClientData))
            let object = try CBORReader.decode(vector.attestation)
            let authData = try XCTUnwrap(object["authData"]?.bytesValue)
            func replaced(_ newAuthData: [UInt8]) throws -> [UInt8] {
                CBORValue.map(try XCTUnwrap(object.mapEntries).map { entry in
                    entry.key == .text("authData") ? CBORMapEntry(entry.key, .bytes(newAuthData)) : entry
                }).encoded
            }
            var changes: [[UInt8]] = (0..<authData.count).map { Array(authData.prefix($0)) }
            for position in authData.indices {
                var flipped = authData
                flipped[position] ^= 1 << UInt8(position % 8)
                changes.append(flipped)
            }
            changes.append(authData + CBORValue.map([]).encoded)
            for change in changes {
                do {
                    _ = try await verifier.verifyAttestation(try replaced(change), clientDataHash: hash, at: vector.attestedAt)
                    XCTFail("\(vector.name): changed authData verified")
                } catch let failure as AttestationFailure {
                    XCTAssertTrue(
                        [.malformed, .nonceMismatch, .rpIdMismatch, .counterNotIncreasing, .aaguidMismatch, .keyIdMismatch].contains(failure.reason),
                        failure.description
                    )
                }
            }
        }
    }

    func testEveryPrefixAndFlipOfEveryAssertionIsRefused() async throws {
        for vector in try AppAttestVector.all() {
            let verifier = AppAttestVerifier(appID: vector.appID, environment: .development)
            let key = try await verifier.verifyAttestation(
                vector.attestation, clientDataHash: Array(SHA256.hash(data: vector.attestationClientData)), at: vector.attestedAt
            ).publicKey
            var changes: [[UInt8]] = (0..<vector.assertion.count).map { Array(vector.assertion.prefix($0)) }
            for position in vector.assertion.indices {
                for bit in 0..<8 {
                    var flipped = vector.assertion
                    flipped[position] ^= 1 << UInt8(bit)
                    changes.append(flipped)
                }
            }
            for change in changes {
                do {
                    _ = try verifier.verifyAssertion(change, clientData: .data(vector.assertionClientData), publicKey: key, previousCounter: 0)
                    XCTFail("\(vector.name): a changed assertion verified")
                } catch {
                    XCTAssertTrue([.malformed, .signatureInvalid, .rpIdMismatch, .counterNotIncreasing].contains(error.reason), error.description)
                }
            }
        }
    }
}
