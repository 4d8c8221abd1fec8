// The WebAuthn verifier against real passkey responses (Tests/Fixtures/webauthn): an iPhone's `apple` registration,
// YubiKeys' `packed` ones, and assertions with EC2, RSA and OKP keys.
import Foundation
import KeywardAttestation
import KeywardJOSE
import XCTest

final class WebAuthnVectorTests: XCTestCase {
    struct Vectors: Decodable {
        struct Credential: Decodable {
            struct Response: Decodable {
                let clientDataJSON: String
                let attestationObject: String?
                let authenticatorData: String?
                let signature: String?
                let userHandle: String?
            }
            let id: String
            let response: Response
        }
        struct Registration: Decodable {
            let name: String
            let credential: Credential
            let challenge: String
            let rpId: String
            let origin: String
            let verifyAt: String?
            let expectedFormat: String
        }
        struct Authentication: Decodable {
            let name: String
            let credential: Credential
            let challenge: String
            let rpId: String
            let origin: String
            let credentialPublicKey: String
            let storedSignCount: UInt32
            let requireUserVerification: Bool
            let newSignCount: UInt32?
            let refusal: String?
        }
        let registrations: [Registration]
        let authentications: [Authentication]
    }

    let vectors: Vectors = {
        let data = try! Fixtures.data("webauthn/py_webauthn-vectors.json")
        return try! JSONDecoder().decode(Vectors.self, from: data)
    }()

    /// Leaf certificates of packed YubiKey attestations live to 2050; the apple leaf three days from 2021-08-31.
    func time(_ vector: Vectors.Registration) -> Date {
        vector.verifyAt.flatMap { try? Date($0, strategy: .iso8601) } ?? Date(timeIntervalSince1970: 1_700_000_000)
    }

    func testEveryRealRegistrationVerifies() async throws {
        XCTAssertEqual(vectors.registrations.count, 3)
        for vector in vectors.registrations {
            let party = WebAuthnRelyingParty(rpID: vector.rpId, origins: [vector.origin])
            let registration = try await party.verifyRegistration(
                clientDataJSON: try Base64URL.decode(vector.credential.response.clientDataJSON),
                attestationObject: try Base64URL.decode(vector.credential.response.attestationObject!),
                challenge: try Base64URL.decode(vector.challenge), requireUserVerification: false, at: time(vector)
            )
            XCTAssertEqual(Base64URL.encode(registration.credentialID), vector.credential.id, vector.name)
            XCTAssertEqual(registration.attestation.format, vector.expectedFormat, vector.name)
            // Only the apple statement leads to a root Keyward holds; packed chains are trusted only when a realm names roots.
            XCTAssertEqual(registration.attestation.trusted, vector.expectedFormat == "apple", vector.name)
        }
    }

    func testTheAppleRegistrationIsUntrustedOnceItsLeafExpired() async throws {
        let vector = try XCTUnwrap(vectors.registrations.first { $0.expectedFormat == "apple" })
        let party = WebAuthnRelyingParty(rpID: vector.rpId, origins: [vector.origin])
        do {
            _ = try await party.verifyRegistration(
                clientDataJSON: try Base64URL.decode(vector.credential.response.clientDataJSON),
                attestationObject: try Base64URL.decode(vector.credential.response.attestationObject!),
                challenge: try Base64URL.decode(vector.challenge), requireUserVerification: false, at: time(vector) + 7 * 86_400
            )
            XCTFail("an expired apple chain verified")
        } catch {
            XCTAssertEqual((error as? WebAuthnFailure)?.reason, .attestationUntrusted)
        }
    }

    func testAPackedChainIsUntrustedWhenTheRealmAsksForAttestationWithoutItsRoot() async throws {
        let vector = try XCTUnwrap(vectors.registrations.first { $0.expectedFormat == "packed" })
        let party = WebAuthnRelyingParty(rpID: vector.rpId, origins: [vector.origin])
        for roots in [nil, PinnedRoots.appleWebAuthn] {
            do {
                _ = try await party.verifyRegistration(
                    clientDataJSON: try Base64URL.decode(vector.credential.response.clientDataJSON),
                    attestationObject: try Base64URL.decode(vector.credential.response.attestationObject!),
                    challenge: try Base64URL.decode(vector.challenge), requireUserVerification: false, attestation: .direct(packedRoots: roots),
                    at: time(vector)
                )
                XCTFail("a YubiKey chain was trusted without Yubico's root")
            } catch {
                XCTAssertEqual((error as? WebAuthnFailure)?.reason, .attestationUntrusted)
            }
        }
    }

    func testRealAssertionsVerifyOrAreRefusedAsPyWebAuthnDecides() throws {
        XCTAssertEqual(vectors.authentications.count, 5)
        for vector in vectors.authentications {
            let party = WebAuthnRelyingParty(rpID: vector.rpId, origins: [vector.origin])
            let stored = WebAuthnRelyingParty.StoredCredential(
                key: try COSECredentialKey(bytes: try Base64URL.decode(vector.credentialPublicKey)), signCount: vector.storedSignCount,
                backupEligible: false
            )
            let response = vector.credential.response
            do {
                let assertion = try party.verifyAssertion(
                    clientDataJSON: try Base64URL.decode(response.clientDataJSON), authenticatorData: try Base64URL.decode(response.authenticatorData!),
                    signature: try Base64URL.decode(response.signature!), challenge: try Base64URL.decode(vector.challenge), credential: stored,
                    requireUserVerification: vector.requireUserVerification
                )
                XCTAssertNil(vector.refusal, vector.name)
                XCTAssertEqual(assertion.signCount, vector.newSignCount, vector.name)
            } catch {
                XCTAssertEqual((error as? WebAuthnFailure)?.reason.rawValue, vector.refusal, "\(vector.name): \(error)")
            }
        }
    }
}
