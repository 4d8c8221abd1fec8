// Tests: App Attest judges cheap fields before any chain or signature verification, so bad objects cost little.
import AttestationTestSupport
import Crypto
import Foundation
import KeywardAttestation
import KeywardCBOR
import XCTest

/// An unauthenticated client must not get the server to verify a certificate chain (two ECDSA P-384 verifications)
/// or an assertion signature for an object whose plain fields are already wrong: those fields are judged first.
/// There is no seam to count signature verifications, so the reason is the proof: an object that is wrong in a
/// cheap field AND has a chain that cannot verify (a forged CA, only Apple's root pinned) is refused with the
/// cheap field's reason, which it could only be if the chain had not been looked at yet.
final class AppAttestCheckOrderTests: XCTestCase {
    private let time = Date(timeIntervalSince1970: 1_750_000_000)

    /// Apple's root only: no forged object ever gets past the chain.
    private func applePinned(_ forged: ForgedAppAttestation, environment: AppAttestEnvironment = .development) -> AppAttestVerifier {
        AppAttestVerifier(appID: forged.appID, environment: environment)
    }

    private func reason(_ body: () async throws -> some Any) async -> AttestationReason? {
        do {
            _ = try await body()
            return nil
        } catch let failure as AttestationFailure {
            return failure.reason
        } catch {
            XCTFail("not an AttestationFailure: \(error)")
            return nil
        }
    }

    private func attestationReason(
        _ forged: ForgedAppAttestation, verifier: AppAttestVerifier? = nil, clientDataHash: [UInt8]? = nil, keyID: [UInt8]? = nil
    ) async -> AttestationReason? {
        await reason {
            try await (verifier ?? applePinned(forged)).verifyAttestation(
                try forged.object(), clientDataHash: clientDataHash ?? forged.clientDataHash, keyID: keyID, at: forged.time
            )
        }
    }

    func testAForgedAttestationWithNothingElseWrongFailsAtTheChain() async throws {
        let forged = try ForgedAppAttestation(time: time)
        let outcome = await attestationReason(forged)
        XCTAssertEqual(outcome, .chainInvalid)
    }

    func testEveryCheapFieldIsJudgedBeforeTheChain() async throws {
        var otherApp = try ForgedAppAttestation(time: time)
        otherApp.appID = "ABCDE12345.de.vincent-haupert.apple-appattest-poc"
        let rpID = await attestationReason(otherApp, verifier: AppAttestVerifier(appID: "6MURL8TA57.de.vincent-haupert.apple-appattest-poc", environment: .development))
        XCTAssertEqual(rpID, .rpIdMismatch)

        var counted = try ForgedAppAttestation(time: time)
        counted.counter = 1
        let counter = await attestationReason(counted)
        XCTAssertEqual(counter, .counterNotIncreasing)

        let development = try ForgedAppAttestation(time: time)
        let aaguid = await attestationReason(development, verifier: applePinned(development, environment: .production))
        XCTAssertEqual(aaguid, .aaguidMismatch)

        var shortID = try ForgedAppAttestation(time: time)
        shortID.credentialID = Array(shortID.keyID.prefix(16))
        let short = await attestationReason(shortID)
        XCTAssertEqual(short, .keyIdMismatch)

        // A credential id of the right length that is not SHA-256 of the COSE key beside it.
        var otherID = try ForgedAppAttestation(time: time)
        otherID.credentialID = Array(otherID.keyID.reversed())
        let other = await attestationReason(otherID)
        XCTAssertEqual(other, .keyIdMismatch)

        // The key id the app sent is not the credential id.
        let sentID = try ForgedAppAttestation(time: time)
        let sent = await attestationReason(sentID, keyID: Array(SHA256.hash(data: Array("another key".utf8))))
        XCTAssertEqual(sent, .keyIdMismatch)

        var notP256 = try ForgedAppAttestation(time: time)
        notP256.coseKey = .map([CBORMapEntry(.integer(1), .integer(2))])
        let cose = await attestationReason(notP256)
        XCTAssertEqual(cose, .keyIdMismatch)

        var noNonce = try ForgedAppAttestation(time: time)
        noNonce.certifiesNonce = false
        let nonce = await attestationReason(noNonce)
        XCTAssertEqual(nonce, .nonceMismatch)
    }

    /// The same on a real vector: at a time its leaf is not valid, a wrong team id is still what is reported.
    func testARealVectorOfAnotherTeamIsRefusedForItsRpIdAtAnyTime() async throws {
        let vector = try XCTUnwrap(AppAttestVector.all().first)
        let otherTeam = AppAttestVerifier(appID: "ABCDE12345" + vector.appID.drop { $0 != "." }, environment: .development)
        let outcome = await reason {
            try await otherTeam.verifyAttestation(
                vector.attestation, clientDataHash: Array(SHA256.hash(data: vector.attestationClientData)), at: Date(timeIntervalSince1970: 0)
            )
        }
        XCTAssertEqual(outcome, .rpIdMismatch)
    }

    /// What binds authData to the certificate (the certified nonce's value, the certified key) means something only
    /// once the certificate is verified: those run after the chain, and are reached only with the forged CA pinned.
    func testTheCertificateBindingsRunAfterTheChain() async throws {
        let forged = try ForgedAppAttestation(time: time)
        let forgedPinned = AppAttestVerifier(appID: forged.appID, environment: .development, roots: PinnedRoots([forged.ca]))
        let otherHash = Array(SHA256.hash(data: Array("another challenge".utf8)))
        let nonceBehindChain = await attestationReason(forged, clientDataHash: otherHash)
        XCTAssertEqual(nonceBehindChain, .chainInvalid)
        let nonce = await attestationReason(forged, verifier: forgedPinned, clientDataHash: otherHash)
        XCTAssertEqual(nonce, .nonceMismatch)

        // authData consistent in itself (credential id = SHA-256 of its COSE key), but the certificate certifies
        // another key.
        var swapped = try ForgedAppAttestation(time: time)
        let otherKey = P256.Signing.PrivateKey().publicKey
        swapped.coseKey = ForgedAppAttestation.coseKey(otherKey)
        swapped.credentialID = Array(SHA256.hash(data: otherKey.x963Representation))
        let keyBehindChain = await attestationReason(swapped)
        XCTAssertEqual(keyBehindChain, .chainInvalid)
        let key = await attestationReason(swapped, verifier: AppAttestVerifier(appID: swapped.appID, environment: .development, roots: PinnedRoots([swapped.ca])))
        XCTAssertEqual(key, .keyIdMismatch)
    }

    // MARK: Assertions

    private let appID = "ABCDE12345.com.example.app"
    private let clientData = Array("challenge-7".utf8)

    private func assertionReason(_ assertion: [UInt8], key: P256.Signing.PublicKey, previousCounter: UInt32, appID: String? = nil) async -> AttestationReason? {
        await reason {
            try AppAttestVerifier(appID: appID ?? self.appID, environment: .production)
                .verifyAssertion(assertion, clientData: .data(clientData), publicKey: key, previousCounter: previousCounter)
        }
    }

    /// An assertion by a key that is not the stored one: its signature cannot verify, yet another app's rpIdHash or
    /// a counter that does not increase is what refuses it.
    func testAssertionRpIdAndCounterAreJudgedBeforeTheSignature() async throws {
        let stored = P256.Signing.PrivateKey().publicKey
        let stranger = P256.Signing.PrivateKey()
        let forOtherApp = try ForgedAppAttestation.assertion(key: stranger, appID: "ZZZZZ99999.com.example.other", counter: 9, clientData: clientData)
        let rpID = await assertionReason(forOtherApp, key: stored, previousCounter: 8)
        XCTAssertEqual(rpID, .rpIdMismatch)

        let replayed = try ForgedAppAttestation.assertion(key: stranger, appID: appID, counter: 8, clientData: clientData)
        let counter = await assertionReason(replayed, key: stored, previousCounter: 8)
        XCTAssertEqual(counter, .counterNotIncreasing)

        // Right app, increasing counter: now the signature decides.
        let fresh = try ForgedAppAttestation.assertion(key: stranger, appID: appID, counter: 9, clientData: clientData)
        let signature = await assertionReason(fresh, key: stored, previousCounter: 8)
        XCTAssertEqual(signature, .signatureInvalid)
        let verified = await assertionReason(fresh, key: stranger.publicKey, previousCounter: 8)
        XCTAssertNil(verified)
    }
}
