// Tests: the built-in pinned roots are the published ones, chains verify only to them, and in the order sent.
import Crypto
import Foundation
import KeywardAttestation
import SwiftASN1
import X509
import XCTest

final class PinnedRootsTests: XCTestCase {
    func testBuiltInRootsAreThePublishedCertificates() throws {
        func fingerprints(_ roots: PinnedRoots) throws -> [String] {
            try roots.certificates.map { certificate in
                var serializer = DER.Serializer()
                try serializer.serialize(certificate)
                return SHA256.hash(data: serializer.serializedBytes).map { String(format: "%02x", $0) }.joined()
            }
        }
        XCTAssertEqual(try fingerprints(.appleAppAttestation), ["1cb9823ba28ba6ad2d33a006941de2ae4f513ef1d4e831b9f7e0fa7b6242c932"])
        XCTAssertEqual(try fingerprints(.appleWebAuthn), ["0915dd5c07a28db549d1f677bb5a75d4bfbe9561a773424327762e9e02f9bb29"])
        XCTAssertEqual(try fingerprints(.googleHardwareAttestation), [
            "cedb1cb6dc896ae5ec797348bce9286753c2b38ee71ce0fbe34a9a1248800dfc",
            "6d9db4ce6c5c0b293166d08986e05774a8776ceb525d9e4329520de12ba4bcc0",
        ])
    }

    /// A real Pixel chain ends in its own copy of Google's root; verification uses the pinned one and holds only
    /// inside every certificate's validity.
    func testAndroidChainVerifiesOnlyToPinnedRootsAndInsideValidity() async throws {
        let chain = try PEMDocument.parseMultiple(pemString: Fixtures.text("android-key-attestation/tegu/sdk36/TEE_EC_2026_ROOT.pem"))
            .map { try Certificate(pemDocument: $0) }
        let madeAt = try Fixtures.androidCreationTime("android-key-attestation/tegu/sdk36/TEE_EC_2026_ROOT.json")
        let leaf = try await PinnedRoots.googleHardwareAttestation.verify(chain: chain, at: madeAt)
        XCTAssertEqual(leaf, chain[0])

        do {
            _ = try await PinnedRoots.appleAppAttestation.verify(chain: chain, at: madeAt)
            XCTFail("an Android chain verified to Apple's root")
        } catch {
            XCTAssertEqual(error.reason, .chainInvalid)
        }
        do {
            _ = try await PinnedRoots.googleHardwareAttestation.verify(chain: chain, at: Date(timeIntervalSince1970: 4_102_444_800))
            XCTFail("a chain verified in 2100")
        } catch {
            XCTAssertEqual(error.reason, .chainInvalid)
        }
    }

    /// The device's own root is never an anchor: trusting it alone fails unless it is one of the pinned roots.
    func testChainWithOnlyItsOwnSelfSignedTopDoesNotVerifyAgainstOtherRoots() async throws {
        let chain = try PEMDocument.parseMultiple(pemString: Fixtures.text("android-key-attestation/tegu/sdk36/TEE_EC_2026_ROOT.pem"))
            .map { try Certificate(pemDocument: $0) }
        let madeAt = try Fixtures.androidCreationTime("android-key-attestation/tegu/sdk36/TEE_EC_2026_ROOT.json")
        do {
            _ = try await PinnedRoots([chain[0]]).verify(chain: chain, at: madeAt)
            XCTFail("verified with the leaf as root")
        } catch {
            XCTAssertEqual(error.reason, .chainInvalid)
        }
        do {
            _ = try await PinnedRoots.googleHardwareAttestation.verify(chain: [], at: madeAt)
            XCTFail("an empty chain verified")
        } catch {
            XCTAssertEqual(error.reason, .malformed)
        }
    }
}

/// Security review C1: certificates that all share one subject (and so could each have signed the others) must not
/// make the chain check try every ordering of them; a chain is checked as sent, each certificate issued by the next.
final class ChainOrderTests: XCTestCase {
    func testACertificateRepeatingASubjectIsRefusedBeforeAnySearch() async throws {
        let time = Date()
        let key = P256.Signing.PrivateKey()
        let shared = try DistinguishedName { CommonName("loop") }
        var intermediates: [Certificate] = []
        for index in 0..<7 {
            intermediates.append(try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: time - 3600, notValidAfter: time + 3600,
                issuer: shared, subject: shared, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    SubjectAlternativeNames([.dnsName("n\(index).example")])
                },
                issuerPrivateKey: .init(key)
            ))
        }
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(P256.Signing.PrivateKey().publicKey), notValidBefore: time - 3600,
            notValidAfter: time + 3600, issuer: shared, subject: try DistinguishedName { CommonName("leaf") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: Certificate.Extensions(), issuerPrivateKey: .init(key)
        )
        do {
            _ = try await PinnedRoots.googleHardwareAttestation.verify(chain: [leaf] + intermediates, at: time)
            XCTFail("verified")
        } catch {
            XCTAssertEqual(error.reason, .malformed, "\(error)")
            XCTAssertTrue(error.detail.contains("subject"), "\(error)")
        }
    }

    func testAChainOutOfOrderIsRefused() async throws {
        let chain = try PEMDocument.parseMultiple(pemString: Fixtures.text("android-key-attestation/tegu/sdk36/TEE_EC_2026_ROOT.pem"))
            .map { try Certificate(pemDocument: $0) }
        let madeAt = try Fixtures.androidCreationTime("android-key-attestation/tegu/sdk36/TEE_EC_2026_ROOT.json")
        do {
            _ = try await PinnedRoots.googleHardwareAttestation.verify(chain: [chain[0]] + chain.dropFirst().reversed(), at: madeAt)
            XCTFail("verified out of order")
        } catch {
            XCTAssertEqual(error.reason, .malformed, "\(error)")
        }
    }
}
