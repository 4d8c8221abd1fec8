// The Android attestation check that the device attested this registration's challenge.
import Foundation

/// The device attested the challenge of this registration (`CHALLENGE_MISMATCH`): the proof is fresh and
/// bound to the registration's key, not replayed from another.
struct ChallengeRule: AndroidAttestationRule {
    let expected: [UInt8]?

    func check(_ evidence: AndroidAttestationEvidence) throws(AttestationFailure) -> AttestationCheck {
        let attested = evidence.keyDescription.attestationChallenge
        guard let expected else {
            return AttestationCheck("challenge", .notChecked, "no expected challenge given")
        }
        guard attested == expected else {
            throw AttestationFailure(.challengeMismatch, "the attested challenge (\(attested.count) bytes, \(Data(attested).base64EncodedString().prefix(64))) is not the expected one (\(expected.count) bytes)")
        }
        return AttestationCheck("challenge", .passed, "the expected \(expected.count)-byte challenge")
    }
}
