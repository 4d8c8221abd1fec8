// Tests: Android chain input forms, ML-DSA chains reported unsupported, and damaged chains refused without traps.
import Crypto
import Foundation
import KeywardAttestation
import SwiftASN1
import X509
import XCTest

/// The input forms of an Android chain, the refusal of chains this build cannot verify (ML-DSA), and damaged
/// chains: none traps, each is refused with a known reason or, where the damage touches nothing checked, verifies.
final class AndroidCertificateChainTests: XCTestCase {
    func testEveryInputFormReadsTheSameChain() throws {
        let name = "caiman/sdk36/SB_EC_RKP"
        let der = try AndroidVectors.derCertificates(name)
        let standard = der.map { Data($0).base64EncodedString() }
        let urlSafe = standard.map { $0.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "") }
        let wrapped = der.map { Data($0).base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed]) }
        let wire = try JSONSerialization.data(withJSONObject: ["type": "android-key", "chain": standard])

        let chains = [
            try AndroidVectors.chain(name),
            try AndroidCertificateChain(der: der),
            try AndroidCertificateChain(base64: standard),
            try AndroidCertificateChain(base64: urlSafe),
            try AndroidCertificateChain(base64: wrapped),
            try AndroidCertificateChain(wireJSON: Array(wire)),
        ]
        for chain in chains {
            XCTAssertEqual(chain.derEncoded, der)
        }
        XCTAssertEqual(der.count, 5)
    }

    func testUnreadableInputsAreMalformed() throws {
        let der = try AndroidVectors.derCertificates("tegu/sdk36/TEE_EC_2026_ROOT")
        let base64 = der.map { Data($0).base64EncodedString() }
        let keyPEM = P256.Signing.PrivateKey().publicKey.pemRepresentation
        let cases: [(String, () throws -> AndroidCertificateChain)] = [
            ("no certificate", { try AndroidCertificateChain(der: []) }),
            ("11 certificates", { try AndroidCertificateChain(der: Array(repeating: der[0], count: 11)) }),
            ("a certificate over 32 KiB", { try AndroidCertificateChain(der: [der[0] + Array(repeating: 0, count: 32 * 1024)]) }),
            ("bytes that are not a certificate", { try AndroidCertificateChain(der: [der[0], [0x30, 0x03, 0x02, 0x01, 0x01]]) }),
            ("not base64", { try AndroidCertificateChain(base64: ["MIIB*x"]) }),
            ("a PEM public key", { try AndroidCertificateChain(pem: keyPEM) }),
            ("no PEM block", { try AndroidCertificateChain(pem: "hello") }),
            ("a JSON array", { try AndroidCertificateChain(wireJSON: Array("[]".utf8)) }),
            ("another type", { try AndroidCertificateChain(wireJSON: Self.wire(["type": "apple-appattest", "chain": base64])) }),
            ("no chain", { try AndroidCertificateChain(wireJSON: Self.wire(["type": "android-key"])) }),
            ("a chain of numbers", { try AndroidCertificateChain(wireJSON: Self.wire(["type": "android-key", "chain": [1, 2]])) }),
            ("a duplicated member", {
                try AndroidCertificateChain(wireJSON: Array(#"{"type":"android-key","chain":[],"chain":["\#(base64[0])"]}"#.utf8))
            }),
        ]
        for (name, read) in cases {
            XCTAssertThrowsError(try read(), name) { error in
                XCTAssertEqual((error as? AttestationFailure)?.reason, .malformed, "\(name): \(error)")
            }
        }
    }

    /// The newest devices sign their chains with ML-DSA, which swift-certificates 1.21 cannot verify. A real
    /// ML-DSA-65 signature over a real leaf's contents, and a certificate carrying an ML-DSA-65 key, are both
    /// reported as UNSUPPORTED_ALGORITHM from every input form.
    func testMLDSAChainsAreUnsupportedNotMalformed() async throws {
        let name = "tegu/sdk36/TEE_EC_2026_ROOT"
        let der = try AndroidVectors.derCertificates(name)
        let signer = try MLDSA65.PrivateKey()

        let leafParts = try TestDER.children(der[0])
        var tbs = try TestDER.children(leafParts[0])
        tbs[1 + 1] = Self.mlDSA65Identifier  // after [0] version and the serial number
        let signedTBS = TestDER.sequence(tbs)
        let signature = try signer.signature(for: signedTBS)
        XCTAssert(signer.publicKey.isValidSignature(signature, for: signedTBS))
        let mlDSALeaf = TestDER.sequence([signedTBS, Self.mlDSA65Identifier, TestDER.tlv([0x03], [0x00] + Array(signature))])

        var intermediateTBS = try TestDER.children(TestDER.children(der[1])[0])
        intermediateTBS[1 + 5] = TestDER.sequence([Self.mlDSA65Identifier, TestDER.tlv([0x03], [0x00] + Array(signer.publicKey.rawRepresentation))])
        let intermediateParts = try TestDER.children(der[1])
        let mlDSAKeyIntermediate = TestDER.sequence([TestDER.sequence(intermediateTBS), intermediateParts[1], intermediateParts[2]])

        for chain in [[mlDSALeaf] + der.dropFirst(), [der[0], mlDSAKeyIntermediate] + der.dropFirst(2)] {
            let pem = chain.map { PEMDocument(type: "CERTIFICATE", derBytes: $0).pemString }.joined(separator: "\n")
            let readings: [() throws -> AndroidCertificateChain] = [
                { try AndroidCertificateChain(der: chain) },
                { try AndroidCertificateChain(pem: pem) },
                { try AndroidCertificateChain(base64: chain.map { Data($0).base64EncodedString() }) },
            ]
            for read in readings {
                XCTAssertThrowsError(try read(), "an ML-DSA chain was read") { error in
                    let failure = error as? AttestationFailure
                    XCTAssertEqual(failure?.reason, .unsupportedAlgorithm, "\(error)")
                    XCTAssert(failure?.detail.contains("ML-DSA-65 (2.16.840.1.101.3.4.3.18)") == true, "\(error)")
                }
            }
        }
    }

    /// Every chain cut short at many points: refused as MALFORMED while reading, before any cryptography.
    func testTruncatedCertificatesAreMalformed() throws {
        for name in try Self.allChains() {
            let der = try AndroidVectors.derCertificates(name)
            for (index, certificate) in der.enumerated() {
                for length in Swift.stride(from: 0, to: certificate.count, by: 29) {
                    var damaged = der
                    damaged[index] = Array(certificate.prefix(length))
                    XCTAssertThrowsError(try AndroidCertificateChain(der: damaged), "\(name) certificate \(index) cut to \(length)") { error in
                        XCTAssertEqual((error as? AttestationFailure)?.reason, .malformed)
                    }
                }
            }
        }
    }

    /// One bit flipped at many points of every certificate of every chain, then the whole verification: a flip
    /// breaks the DER (MALFORMED), a signature or a name (CHAIN_INVALID), or the challenge (CHALLENGE_MISMATCH);
    /// a flip in something nothing checks (the device's own copy of the root, unused as an anchor) still verifies.
    func testBitFlippedChainsAreRefusedWithAKnownReasonOrVerify() async throws {
        let verifier = AndroidKeyAttestationVerifier(roots: PinnedRoots.googleHardwareAttestation.adding(try AndroidVectors.root2016()))
        let known: Set<AttestationReason> = [.malformed, .chainInvalid, .challengeMismatch]
        var outcomes: [AttestationReason?: Int] = [:]
        for name in try Self.allChains() where !name.hasPrefix("invalid/") {
            let der = try AndroidVectors.derCertificates(name)
            let policy = AndroidAttestationPolicy.inspection(expectedChallenge: try AndroidVectors.challenge(name))
            let time = try AndroidVectors.creationTime(name)
            for (index, certificate) in der.enumerated() {
                for position in Swift.stride(from: index % 7, to: certificate.count, by: 83) {
                    var damaged = der
                    damaged[index][position] ^= 1 << (position % 8)
                    var reason: AttestationReason?
                    do {
                        _ = try await verifier.verify(AndroidCertificateChain(der: damaged), policy: policy, at: time)
                    } catch {
                        reason = error.reason
                    }
                    outcomes[reason, default: 0] += 1
                    if let reason { XCTAssert(known.contains(reason), "\(name) certificate \(index) byte \(position): \(reason)") }
                }
            }
        }
        XCTAssertGreaterThan(outcomes[.chainInvalid] ?? 0, 100, "\(outcomes)")
        XCTAssertGreaterThan(outcomes[.malformed] ?? 0, 0, "\(outcomes)")
    }

    // MARK: Helpers

    /// AlgorithmIdentifier { id-ml-dsa-65 } (FIPS 204 keys and signatures carry no parameters).
    static let mlDSA65Identifier = TestDER.sequence([TestDER.tlv([0x06], [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x12])])

    static func allChains() throws -> [String] {
        try AndroidVectors.currentChains() + AndroidVectors.bluelineChains() + AndroidVectors.invalidChains()
    }

    static func wire(_ object: [String: Any]) -> [UInt8] {
        Array((try? JSONSerialization.data(withJSONObject: object)) ?? Data())
    }
}
