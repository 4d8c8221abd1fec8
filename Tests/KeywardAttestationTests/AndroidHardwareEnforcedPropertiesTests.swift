// Tests: Android keys claiming secure hardware are judged on the hardware-enforced list, never the software one.
import AttestationTestSupport
import Crypto
import Foundation
import KeywardAttestation
import KeywardJOSE
import SwiftASN1
import XCTest

/// A key whose attestation claims TrustedEnvironment or StrongBox is judged on what the secure hardware enforces
/// (the hardwareEnforced list, KeyMint's name for the old teeEnforced): purpose, algorithm, curve, origin and the
/// root of trust written only in softwareEnforced — which the Android system, not the hardware, vouches for — must
/// not satisfy the registration policy. Built on real KeyDescriptions (a StrongBox and a TEE one) whose tags are
/// moved from one list to the other, certified by a forged root the test pins.
final class AndroidHardwareEnforcedPropertiesTests: XCTestCase {
    private let hardwareVectors = ["caiman/sdk36/SB_EC_RKP", "tegu/sdk36/TEE_EC_2026_ROOT"]
    private let challenge = Array("the registration's binding nonce".utf8)

    private enum Tag {
        static let purpose: UInt = 1, algorithm: UInt = 2, keySize: UInt = 3, ecCurve: UInt = 10
        static let origin: UInt = 702, rootOfTrust: UInt = 704
    }

    private func tagNumber(_ der: [UInt8]) throws -> UInt {
        try DER.parse(der).identifier.tagNumber
    }

    /// The vector's KeyDescription with the test's challenge, `tags` moved from hardwareEnforced to
    /// softwareEnforced (kept in ascending order, as the schema wants), and the security levels optionally replaced.
    private func keyDescription(_ name: String, moving tags: Set<UInt>, securityLevel: UInt8? = nil) throws -> [UInt8] {
        let original = try ForgedAndroidAttestation.replacingChallenge(of: AndroidVectors.keyDescriptionBytes(name), with: challenge)
        var fields = try TestDER.children(original)
        let software = try TestDER.children(fields[6]), hardware = try TestDER.children(fields[7])
        let moved = try hardware.filter { tags.contains(try tagNumber($0)) }
        XCTAssertEqual(moved.count, tags.count, "\(name): not every tag to move is in its hardware list")
        let keptSoftware = try software.filter { !tags.contains(try tagNumber($0)) }
        fields[6] = TestDER.sequence(try (keptSoftware + moved).sorted { try tagNumber($0) < tagNumber($1) })
        fields[7] = TestDER.sequence(try hardware.filter { !tags.contains(try tagNumber($0)) })
        if let securityLevel {
            fields[1] = [0x0A, 0x01, securityLevel]
            fields[3] = [0x0A, 0x01, securityLevel]
        }
        return TestDER.sequence(fields)
    }

    private struct Forged {
        let verifier: AndroidKeyAttestationVerifier
        let chain: AndroidCertificateChain
        let key: JWK
        let time: Date
    }

    private func forge(_ name: String, _ description: [UInt8]) throws -> Forged {
        let time = try AndroidVectors.creationTime(name)
        let forged = try ForgedAndroidAttestation(time: time)
        let key = P256.Signing.PrivateKey().publicKey
        return Forged(
            verifier: AndroidKeyAttestationVerifier(roots: PinnedRoots([forged.root])),
            chain: try AndroidCertificateChain(der: forged.chain(certifying: key, keyDescription: description, time: time)),
            key: try JWK(subjectPublicKeyInfo: Array(key.derRepresentation)), time: time
        )
    }

    private func reason(_ forged: Forged, _ policy: AndroidAttestationPolicy) async -> AttestationReason? {
        do {
            _ = try await forged.verifier.verify(forged.chain, policy: policy, at: forged.time)
            return nil
        } catch {
            return error.reason
        }
    }

    private func registration(_ forged: Forged) -> AndroidAttestationPolicy {
        AndroidAttestationPolicy(expectedChallenge: challenge, registeredPublicKey: forged.key)
    }

    /// The forgery itself is sound: untouched, both descriptions pass the default registration policy.
    func testUntouchedDescriptionsPassTheRegistrationPolicy() async throws {
        for name in hardwareVectors {
            let forged = try forge(name, try keyDescription(name, moving: []))
            let outcome = await reason(forged, registration(forged))
            XCTAssertNil(outcome, name)
        }
    }

    func testKeyPropertiesOnlyInSoftwareEnforcedAreRefused() async throws {
        let cases: [(String, Set<UInt>)] = [
            ("purpose", [Tag.purpose]),
            ("origin", [Tag.origin]),
            ("algorithm", [Tag.algorithm]),
            ("curve and size", [Tag.ecCurve, Tag.keySize]),
        ]
        for name in hardwareVectors {
            for (what, tags) in cases {
                let forged = try forge(name, try keyDescription(name, moving: tags))
                let outcome = await reason(forged, registration(forged))
                XCTAssertEqual(outcome, .keyPropertiesRefused, "\(name): \(what) only in softwareEnforced")
            }
        }
    }

    func testRootOfTrustOnlyInSoftwareEnforcedIsRefused() async throws {
        for name in hardwareVectors {
            let forged = try forge(name, try keyDescription(name, moving: [Tag.rootOfTrust]))
            let outcome = await reason(forged, registration(forged))
            XCTAssertEqual(outcome, .bootStateRefused, name)
        }
    }

    /// What the report says (and the CLI prints) comes from the same list the verdict used.
    func testTheReportReadsTheHardwareList() async throws {
        let name = hardwareVectors[0]
        let everything: Set<UInt> = [Tag.purpose, Tag.algorithm, Tag.keySize, Tag.ecCurve, Tag.origin, Tag.rootOfTrust]
        let forged = try forge(name, try keyDescription(name, moving: everything))
        let result = try await forged.verifier.verify(forged.chain, policy: .inspection(expectedChallenge: challenge), at: forged.time)
        XCTAssertEqual(result.purposes, [])
        XCTAssertNil(result.algorithm)
        XCTAssertNil(result.ecCurve)
        XCTAssertNil(result.origin)
        XCTAssertNil(result.verifiedBootState)
        XCTAssertEqual(result.keyDescription.softwareEnforced.purposes, [.sign, .verify], "the moved values are there, just not believed")
    }

    /// A software attestation has only the software list to read: a policy that allows software keys judges that
    /// list (the key is what Android says it is), and the default policy refuses the key for being in software.
    func testASoftwareAttestationIsJudgedOnItsSoftwareListOnlyWhenSoftwareIsAllowed() async throws {
        let name = hardwareVectors[0]
        let keyTags: Set<UInt> = [Tag.purpose, Tag.algorithm, Tag.keySize, Tag.ecCurve, Tag.origin]
        let forged = try forge(name, try keyDescription(name, moving: keyTags, securityLevel: 0))
        var softwareAllowed = registration(forged)
        softwareAllowed.allowSoftware = true
        softwareAllowed.requireVerifiedBoot = false
        let allowed = await reason(forged, softwareAllowed)
        XCTAssertNil(allowed)
        let refused = await reason(forged, registration(forged))
        XCTAssertEqual(refused, .softwareKey)
    }
}
