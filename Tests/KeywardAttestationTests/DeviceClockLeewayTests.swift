// Tests: a device-made leaf may start up to the clock leeway ahead; expiry and CA certificates get no leeway.
import AttestationTestSupport
import Crypto
import Foundation
import KeywardAttestation
import XCTest

/// A device writes its own clock into the notBefore of the certificate it makes for a key (the Android Keystore
/// leaf; App Attest's credential certificate is dated by Apple from the device's request), and device clocks run
/// ahead of servers'. A leaf valid from up to the leeway (5 minutes by default) after the verification time is
/// accepted; nothing else moves: the leaf's expiry, and every date of the certificates above it, are judged at the
/// verification time itself.
final class DeviceClockLeewayTests: XCTestCase {
    private let time = Date(timeIntervalSince1970: 1_760_000_000)
    private let challenge = Array("leeway test challenge".utf8)

    // MARK: Android

    private func androidReason(
        leafNotBefore: Date? = nil, leafNotAfter: Date? = nil, rootNotBefore: Date? = nil,
        verifier makeVerifier: (PinnedRoots) -> AndroidKeyAttestationVerifier = { AndroidKeyAttestationVerifier(roots: $0) }
    ) async throws -> AttestationReason? {
        let forged = try ForgedAndroidAttestation(time: time, rootNotBefore: rootNotBefore)
        let description = try ForgedAndroidAttestation.replacingChallenge(
            of: AndroidVectors.keyDescriptionBytes("caiman/sdk36/SB_EC_RKP"), with: challenge
        )
        let key = P256.Signing.PrivateKey().publicKey
        let chain = try AndroidCertificateChain(der: forged.chain(
            certifying: key, keyDescription: description, time: time, leafNotBefore: leafNotBefore, leafNotAfter: leafNotAfter
        ))
        do {
            _ = try await makeVerifier(PinnedRoots([forged.root])).verify(chain, policy: .inspection(expectedChallenge: challenge), at: time)
            return nil
        } catch {
            return error.reason
        }
    }

    func testAndroidLeafFromTwoMinutesAheadIsAccepted() async throws {
        let outcome = try await androidReason(leafNotBefore: time + 120)
        XCTAssertNil(outcome)
    }

    func testAndroidLeafFromTenMinutesAheadIsRefused() async throws {
        let outcome = try await androidReason(leafNotBefore: time + 600)
        XCTAssertEqual(outcome, .chainInvalid)
    }

    /// Leeway is for a clock ahead at the key's birth, never for a certificate past its end.
    func testAndroidLeafExpiryHasNoLeeway() async throws {
        let expiredAMinuteAgo = try await androidReason(leafNotBefore: time - 3_600, leafNotAfter: time - 60)
        XCTAssertEqual(expiredAMinuteAgo, .chainInvalid)
        let expiresInAMinute = try await androidReason(leafNotBefore: time - 3_600, leafNotAfter: time + 60)
        XCTAssertNil(expiresInAMinute)
    }

    /// The root (like any certificate above the leaf) is a CA's, not the device's: its dates are what they are.
    func testAndroidRootFromTwoMinutesAheadIsRefused() async throws {
        let outcome = try await androidReason(rootNotBefore: time + 120)
        XCTAssertEqual(outcome, .chainInvalid)
    }

    /// The leeway is the verifier's setting (the server passes its own): none refuses the two minutes, fifteen
    /// minutes accept the ten, and a negative or non-finite setting counts as none.
    func testAndroidLeewayIsTheVerifiersSetting() async throws {
        for leeway in [0, -600, TimeInterval.infinity, .nan] {
            let outcome = try await androidReason(leafNotBefore: time + 120) { AndroidKeyAttestationVerifier(roots: $0, leafNotBeforeLeeway: leeway) }
            XCTAssertEqual(outcome, .chainInvalid, "leeway \(leeway)")
        }
        let wide = try await androidReason(leafNotBefore: time + 600) { AndroidKeyAttestationVerifier(roots: $0, leafNotBeforeLeeway: 15 * 60) }
        XCTAssertNil(wide)
        XCTAssertEqual(AndroidKeyAttestationVerifier().leafNotBeforeLeeway, 300)
    }

    // MARK: App Attest

    private func appAttestReason(
        credentialNotBefore: Date?, at verificationTime: Date? = nil,
        verifier makeVerifier: (ForgedAppAttestation) -> AppAttestVerifier = {
            AppAttestVerifier(appID: $0.appID, environment: .development, roots: PinnedRoots([$0.ca]))
        }
    ) async throws -> AttestationReason? {
        var forged = try ForgedAppAttestation(time: time)
        forged.credentialNotBefore = credentialNotBefore
        let object = try forged.object()
        do {
            _ = try await makeVerifier(forged).verifyAttestation(
                object, clientDataHash: forged.clientDataHash, keyID: forged.keyID, at: verificationTime ?? time
            )
            return nil
        } catch {
            return error.reason
        }
    }

    func testAppAttestCredentialCertificateFromTwoMinutesAheadIsAccepted() async throws {
        let outcome = try await appAttestReason(credentialNotBefore: time + 120)
        XCTAssertNil(outcome)
    }

    func testAppAttestCredentialCertificateFromTenMinutesAheadIsRefused() async throws {
        let outcome = try await appAttestReason(credentialNotBefore: time + 600)
        XCTAssertEqual(outcome, .chainInvalid)
    }

    /// The forged credential certificate ends an hour after `time`.
    func testAppAttestCredentialCertificateExpiryHasNoLeeway() async throws {
        let aMinuteAfterItsEnd = try await appAttestReason(credentialNotBefore: nil, at: time + 3_660)
        XCTAssertEqual(aMinuteAfterItsEnd, .chainInvalid)
        let aMinuteBeforeItsEnd = try await appAttestReason(credentialNotBefore: nil, at: time + 3_540)
        XCTAssertNil(aMinuteBeforeItsEnd)
    }

    func testAppAttestLeewayIsTheVerifiersSetting() async throws {
        let none = try await appAttestReason(credentialNotBefore: time + 120) {
            AppAttestVerifier(appID: $0.appID, environment: .development, roots: PinnedRoots([$0.ca]), leafNotBeforeLeeway: 0)
        }
        XCTAssertEqual(none, .chainInvalid)
        let wide = try await appAttestReason(credentialNotBefore: time + 600) {
            AppAttestVerifier(appID: $0.appID, environment: .development, roots: PinnedRoots([$0.ca]), leafNotBeforeLeeway: 15 * 60)
        }
        XCTAssertNil(wide)
        XCTAssertEqual(AppAttestVerifier(appID: "T.b", environment: .production).leafNotBeforeLeeway, 300)
    }
}
