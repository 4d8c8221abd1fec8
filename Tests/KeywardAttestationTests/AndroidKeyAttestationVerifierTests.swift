// Tests: Android Key Attestation on real chains: pinned roots, the registration policy, the first failed check.
import Crypto
import Foundation
import KeywardAttestation
import KeywardJOSE
import X509
import XCTest

/// The whole verification on real chains: chain to the pinned roots at the key's creation time, then the
/// KeyDescription under the registration policy, each refusal with the reason of its first failed check.
final class AndroidKeyAttestationVerifierTests: XCTestCase {
    let verifier = AndroidKeyAttestationVerifier()

    func testCurrentChainsVerifyAtCreationTimeWithTheirChallenge() async throws {
        for name in try AndroidVectors.currentChains() {
            let result = try await verifier.verify(
                AndroidVectors.chain(name), policy: .inspection(expectedChallenge: AndroidVectors.challenge(name)),
                at: AndroidVectors.creationTime(name)
            )
            XCTAssertEqual(result.attestationChallenge, try AndroidVectors.challenge(name), name)
            XCTAssertEqual(result.keyDescriptionCertificate, 0, name)
            XCTAssertEqual(result.checks.first { $0.name == "challenge" }?.outcome, .passed, name)
            XCTAssertEqual(result.checks.first { $0.name == "securityLevel" }?.outcome, .passed, name)
            XCTAssertEqual(result.checks.first { $0.name == "revocation" }?.outcome, .notChecked, name)
            XCTAssertEqual(result.checks.map(\.name), [
                "chain", "revocation", "keyDescription", "challenge", "securityLevel", "verifiedBoot", "keyProperties",
                "appIdentity", "publicKey",
            ])
        }
    }

    /// The default registration policy (EC P-256, hardware, verified boot and locked): caiman's and tegu's keys
    /// pass; every akita chain comes from an unlocked, unverified device, refused at the boot check before its
    /// RSA keys reach the key-properties check. With boot not required, akita's RSA keys are refused for being RSA.
    func testDefaultRegistrationPolicyPerVector() async throws {
        let expected: [String: AttestationReason?] = [
            "akita/sdk34/SB_RSA_NONE": .bootStateRefused,
            "akita/sdk34/TEE_EC_NONE": .bootStateRefused,
            "akita/sdk34/TEE_RSA_BASE+IMEI": .bootStateRefused,
            "akita/sdk34/TEE_RSA_NONE": .bootStateRefused,
            "akita/sdk34/TEE_RSA_NONE_USERAUTH": .bootStateRefused,
            "caiman/sdk36/SB_EC_RKP": nil,
            "caiman/sdk36/TEE_EC_RKP": nil,
            "tegu/sdk36/SB_EC_2026_ROOT": nil,
            "tegu/sdk36/TEE_EC_2026_ROOT": nil,
        ]
        XCTAssertEqual(Set(try AndroidVectors.currentChains()), Set(expected.keys))
        for (name, reason) in expected {
            let outcome = await verdict(name, policy: AndroidAttestationPolicy(expectedChallenge: try AndroidVectors.challenge(name)))
            XCTAssertEqual(outcome, reason, name)
        }

        let withoutBoot: [String: AttestationReason?] = [
            "akita/sdk34/SB_RSA_NONE": .keyPropertiesRefused,
            "akita/sdk34/TEE_EC_NONE": nil,
            "akita/sdk34/TEE_RSA_BASE+IMEI": .keyPropertiesRefused,
            "akita/sdk34/TEE_RSA_NONE": .keyPropertiesRefused,
            "akita/sdk34/TEE_RSA_NONE_USERAUTH": .keyPropertiesRefused,
        ]
        for (name, reason) in withoutBoot {
            let policy = AndroidAttestationPolicy(expectedChallenge: try AndroidVectors.challenge(name), requireVerifiedBoot: false)
            let outcome = await verdict(name, policy: policy)
            XCTAssertEqual(outcome, reason, name)
        }
        // The same RSA keys pass a policy that registers RSA keys.
        let rsa = AndroidAttestationPolicy(expectedChallenge: try AndroidVectors.challenge("akita/sdk34/TEE_RSA_NONE"), requireVerifiedBoot: false, keyAlgorithm: .rsa)
        let rsaOutcome = await verdict("akita/sdk34/TEE_RSA_NONE", policy: rsa)
        XCTAssertNil(rsaOutcome)
    }

    /// Blueline's chains were made in 2018 and 2020, under Google's original 2016 certificate of the RSA root. The
    /// built-in re-issue (valid from 2022) cannot anchor them then; the operator adding the 2016 certificate can.
    func testBluelineVerifiesOnlyWithThe2016RootAdded() async throws {
        let withOldRoot = AndroidKeyAttestationVerifier(roots: PinnedRoots.googleHardwareAttestation.adding(try AndroidVectors.root2016()))
        for name in try AndroidVectors.bluelineChains() {
            let policy = AndroidAttestationPolicy.inspection(expectedChallenge: try AndroidVectors.challenge(name))
            let builtIn = await verdict(name, policy: policy)
            XCTAssertEqual(builtIn, .chainInvalid, name)
            let result = try await withOldRoot.verify(AndroidVectors.chain(name), policy: policy, at: AndroidVectors.creationTime(name))
            XCTAssertEqual(result.attestationVersion, 3, name)
            XCTAssertEqual(result.keyDescription.keymasterVersion, 4, name)
            // Blueline is an unlocked development device, like akita: the registration policy refuses it.
            let registration = await verdict(name, policy: AndroidAttestationPolicy(expectedChallenge: try AndroidVectors.challenge(name)), verifier: withOldRoot)
            XCTAssertEqual(registration, .bootStateRefused, name)
        }
    }

    /// invalid/: the device that wrote deviceLocked as BOOLEAN 01 has a genuine chain, so the KeyDescription is
    /// what fails (MALFORMED). The reordered-tags file is an edited leaf whose signature no longer verifies, so the
    /// chain check, which runs first, refuses it (CHAIN_INVALID); its KeyDescription alone is MALFORMED
    /// (AndroidKeyDescriptionTests).
    func testInvalidVectorsAreRefused() async throws {
        // Inside every certificate's validity (the intermediates were issued in 2021 and 2022).
        let time = Date(timeIntervalSince1970: 1_700_000_000)
        let expected: [String: AttestationReason] = [
            "invalid/malformed_rot_device_locked": .malformed,
            "invalid/tags_not_in_ascending_order": .chainInvalid,
        ]
        for (name, reason) in expected {
            let outcome = await verdict(name, policy: .inspection(expectedChallenge: nil), at: time)
            XCTAssertEqual(outcome, reason, name)
        }
    }

    func testWrongChallengeIsRefused() async throws {
        let name = "caiman/sdk36/SB_EC_RKP"
        var challenge = try AndroidVectors.challenge(name)
        challenge[0] ^= 1
        let outcomes = [
            await verdict(name, policy: AndroidAttestationPolicy(expectedChallenge: challenge)),
            await verdict(name, policy: .inspection(expectedChallenge: challenge)),
            await verdict(name, policy: AndroidAttestationPolicy(expectedChallenge: [])),
        ]
        XCTAssertEqual(outcomes, [.challengeMismatch, .challengeMismatch, .challengeMismatch])
    }

    func testAppIdentityAllowLists() async throws {
        let name = "caiman/sdk36/SB_EC_RKP"
        let challenge = try AndroidVectors.challenge(name)
        let digest = Array(Data(base64Encoded: "EDk47kU35Z6O55L2VFBPuDRvxrNG0LvEQV/DOfz8jsE=")!)
        var wrongDigest = digest
        wrongDigest[31] ^= 0xFF
        let cases: [(Set<String>, Set<[UInt8]>, AttestationReason?)] = [
            (["com.google.android.attestation"], [digest], nil),
            (["com.example.other", "com.google.android.attestation"], [], nil),
            ([], [wrongDigest, digest], nil),
            (["com.example.other"], [digest], .appIdentityMismatch),
            (["com.google.android.attestation"], [wrongDigest], .appIdentityMismatch),
            (["com.google.android"], [], .appIdentityMismatch),
        ]
        for (names, digests, reason) in cases {
            let policy = AndroidAttestationPolicy(expectedChallenge: challenge, allowedPackageNames: names, allowedSigningCertDigests: digests)
            let outcome = await verdict(name, policy: policy)
            XCTAssertEqual(outcome, reason, "\(names) \(digests.count) digests")
        }
        // Without lists nothing is judged, and the report says so.
        let result = try await verifier.verify(AndroidVectors.chain(name), policy: AndroidAttestationPolicy(expectedChallenge: challenge), at: AndroidVectors.creationTime(name))
        XCTAssertEqual(result.checks.first { $0.name == "appIdentity" }?.outcome, .notChecked)
        XCTAssertEqual(result.packageNames, ["com.google.android.attestation"])
        XCTAssertEqual(result.signingCertDigests, [digest])
    }

    func testRegisteredPublicKeyMustBeTheAttestedKey() async throws {
        let name = "tegu/sdk36/TEE_EC_2026_ROOT"
        let challenge = try AndroidVectors.challenge(name)
        let leaf = try AndroidVectors.chain(name).certificates[0]
        let leafKey = try JWK(subjectPublicKeyInfo: Array(P256.Signing.PublicKey(leaf.publicKey)!.derRepresentation))
        let otherKey = try JWK(subjectPublicKeyInfo: Array(P256.Signing.PrivateKey().publicKey.derRepresentation))

        let matching = await verdict(name, policy: AndroidAttestationPolicy(expectedChallenge: challenge, registeredPublicKey: leafKey))
        XCTAssertNil(matching)
        let other = await verdict(name, policy: AndroidAttestationPolicy(expectedChallenge: challenge, registeredPublicKey: otherKey))
        XCTAssertEqual(other, .publicKeyMismatch)
        // An RSA leaf compared with an EC registered key.
        let rsa = await verdict("akita/sdk34/TEE_RSA_NONE", policy: AndroidAttestationPolicy(
            expectedChallenge: try AndroidVectors.challenge("akita/sdk34/TEE_RSA_NONE"), requireVerifiedBoot: false, keyAlgorithm: .any,
            registeredPublicKey: leafKey
        ))
        XCTAssertEqual(rsa, .publicKeyMismatch)
    }

    /// A leaf without the extension below the certificate that carries it: the KeyDescription is read from the
    /// first certificate that has one, but the leaf's key was certified by that key, not by the secure hardware,
    /// so it is never accepted as the registered key. Built on a test PKI (a root pinned for the test) around a
    /// real KeyDescription, since no device signs such a chain.
    func testLeafBelowTheAttestedCertificateIsNotTheAttestedKey() async throws {
        let name = "caiman/sdk36/SB_EC_RKP"
        let time = try AndroidVectors.creationTime(name)
        let rootKey = P256.Signing.PrivateKey()
        let attestedKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("test attestation root") }
        let attestedName = try DistinguishedName { CommonName("attested key") }
        let validity = (time.addingTimeInterval(-3600), time.addingTimeInterval(3600))
        let root = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(rootKey.publicKey),
            notValidBefore: validity.0, notValidAfter: validity.1, issuer: rootName, subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)) },
            issuerPrivateKey: .init(rootKey)
        )
        let attested = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(attestedKey.publicKey),
            notValidBefore: validity.0, notValidAfter: validity.1, issuer: rootName, subject: attestedName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Certificate.Extension(oid: KeyDescription.oid, critical: false, value: try AndroidVectors.keyDescriptionBytes(name)[...])
            },
            issuerPrivateKey: .init(rootKey)
        )
        let leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(leafKey.publicKey),
            notValidBefore: validity.0, notValidAfter: validity.1, issuer: attestedName,
            subject: try DistinguishedName { CommonName("below the attested key") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: Certificate.Extensions(), issuerPrivateKey: .init(attestedKey)
        )
        let chain = try AndroidCertificateChain(certificates: [leaf, attested, root])
        let testPKI = AndroidKeyAttestationVerifier(roots: PinnedRoots([root]))
        let challenge = try AndroidVectors.challenge(name)

        let inspected = try await testPKI.verify(chain, policy: .inspection(expectedChallenge: challenge), at: time)
        XCTAssertEqual(inspected.keyDescriptionCertificate, 1)
        XCTAssertEqual(inspected.publicKey, try JWK(subjectPublicKeyInfo: Array(leafKey.publicKey.derRepresentation)))
        for key in [leafKey.publicKey, attestedKey.publicKey] {
            let policy = AndroidAttestationPolicy(expectedChallenge: challenge, registeredPublicKey: try JWK(subjectPublicKeyInfo: Array(key.derRepresentation)))
            let outcome = await verdict(chain, policy: policy, at: time, verifier: testPKI)
            XCTAssertEqual(outcome, .publicKeyMismatch)
        }
        // The same chain with no extension anywhere has nothing to verify.
        let bare = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(attestedKey.publicKey),
            notValidBefore: validity.0, notValidAfter: validity.1, issuer: rootName, subject: attestedName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)) },
            issuerPrivateKey: .init(rootKey)
        )
        let noDescription = await verdict(try AndroidCertificateChain(certificates: [leaf, bare]), policy: .inspection(expectedChallenge: nil), at: time, verifier: testPKI)
        XCTAssertEqual(noDescription, .malformed)
    }

    func testTimeOutsideValidityIsRefused() async throws {
        // akita's attestation intermediate lived four weeks (2024-09-10 to 2024-10-08); tegu's leaf was made in 2026.
        let cases: [(String, Date)] = [
            ("akita/sdk34/TEE_EC_NONE", Date(timeIntervalSince1970: 1_735_689_600)),  // 2025-01-01
            ("tegu/sdk36/TEE_EC_2026_ROOT", Date(timeIntervalSince1970: 1_735_689_600)),  // before the EC root's 2025-07-17
            ("caiman/sdk36/SB_EC_RKP", Date(timeIntervalSince1970: 4_102_444_800)),  // 2100
        ]
        for (name, time) in cases {
            let outcome = await verdict(name, policy: .inspection(expectedChallenge: try AndroidVectors.challenge(name)), at: time)
            XCTAssertEqual(outcome, .chainInvalid, "\(name) at \(time)")
        }
    }

    /// The first failed check names the refusal: a chain that fails is CHAIN_INVALID even when the challenge and
    /// the boot state would fail too.
    func testFirstFailedCheckDecides() async throws {
        let name = "akita/sdk34/TEE_RSA_NONE"
        let policy = AndroidAttestationPolicy(expectedChallenge: [1, 2, 3])
        let atCreation = await verdict(name, policy: policy)
        XCTAssertEqual(atCreation, .challengeMismatch)
        let in2100 = await verdict(name, policy: policy, at: Date(timeIntervalSince1970: 4_102_444_800))
        XCTAssertEqual(in2100, .chainInvalid)
        let withChallenge = await verdict(name, policy: AndroidAttestationPolicy(expectedChallenge: try AndroidVectors.challenge(name)))
        XCTAssertEqual(withChallenge, .bootStateRefused)
    }

    /// The result as the CLI prints it: the issue's fields by name, the key as a JWK (EC and RSA), the SPKI.
    func testResultEncodesTheIssueFields() async throws {
        let name = "caiman/sdk36/SB_EC_RKP"
        let result = try await verifier.verify(AndroidVectors.chain(name), policy: AndroidAttestationPolicy(expectedChallenge: AndroidVectors.challenge(name)), at: AndroidVectors.creationTime(name))
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: JSONEncoder().encode(result)) as? [String: Any])
        XCTAssertEqual(json["attestationVersion"] as? Int, 300)
        XCTAssertEqual(json["attestationSecurityLevel"] as? String, "STRONG_BOX")
        XCTAssertEqual(json["keymasterSecurityLevel"] as? String, "STRONG_BOX")
        XCTAssertEqual(json["attestationChallenge"] as? String, "N2NjYWMxZWEtNDg0NS00ODJlLTg1OGQtZjZmYTlhYThjMjk1")
        XCTAssertEqual(json["verifiedBootState"] as? String, "VERIFIED")
        XCTAssertEqual(json["deviceLocked"] as? Bool, true)
        XCTAssertEqual(json["packageNames"] as? [String], ["com.google.android.attestation"])
        XCTAssertEqual(json["signingCertDigests"] as? [String], ["EDk47kU35Z6O55L2VFBPuDRvxrNG0LvEQV/DOfz8jsE="])
        XCTAssertEqual(json["purposes"] as? [String], ["SIGN", "VERIFY"])
        XCTAssertEqual(json["algorithm"] as? String, "EC")
        XCTAssertEqual(json["ecCurve"] as? String, "P_256")
        XCTAssertEqual(json["origin"] as? String, "GENERATED")
        let jwk = try XCTUnwrap(json["publicKey"] as? [String: String])
        XCTAssertEqual(jwk["kty"], "EC")
        XCTAssertEqual(jwk["crv"], "P-256")
        XCTAssertEqual(try JWK(subjectPublicKeyInfo: result.subjectPublicKeyInfo), result.publicKey)
        XCTAssertEqual((json["keyDescription"] as? [String: Any])?["attestationVersion"] as? Int, 300)
        XCTAssertEqual((json["checks"] as? [[String: Any]])?.count, 9)
        XCTAssertEqual(json["verifiedAt"] as? String, "2025-09-26T15:30:46Z")

        let rsaName = "akita/sdk34/TEE_RSA_NONE"
        let rsa = try await verifier.verify(AndroidVectors.chain(rsaName), policy: .inspection(expectedChallenge: nil), at: AndroidVectors.creationTime(rsaName))
        guard case .rsa(let modulus, _)? = rsa.publicKey?.material else { return XCTFail("no RSA JWK: \(String(describing: rsa.publicKey))") }
        XCTAssertEqual(modulus.count, 256)
        XCTAssertEqual(rsa.algorithm, .rsa)
        XCTAssertEqual(rsa.verifiedBootState, .unverified)
        XCTAssertEqual(rsa.deviceLocked, false)
        XCTAssertEqual(rsa.checks.first { $0.name == "challenge" }?.outcome, .notChecked)
    }

    // MARK: Helpers

    private func verdict(
        _ name: String, policy: AndroidAttestationPolicy, at time: Date? = nil, verifier: AndroidKeyAttestationVerifier? = nil
    ) async -> AttestationReason? {
        do {
            let when = try time ?? AndroidVectors.creationTime(name)
            return await verdict(try AndroidVectors.chain(name), policy: policy, at: when, verifier: verifier)
        } catch {
            XCTFail("\(name): the fixture does not load: \(error)")
            return nil
        }
    }

    private func verdict(
        _ chain: AndroidCertificateChain, policy: AndroidAttestationPolicy, at time: Date, verifier: AndroidKeyAttestationVerifier? = nil
    ) async -> AttestationReason? {
        do {
            _ = try await (verifier ?? self.verifier).verify(chain, policy: policy, at: time)
            return nil
        } catch {
            return error.reason
        }
    }
}
