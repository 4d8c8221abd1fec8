// The Play Integrity check that a token's nonce or request hash answers this registration.
import Foundation

/// The token answers this registration (`NONCE_MISMATCH`): its nonce (classic request) or request hash (standard
/// request) is the expected one, as bytes when both are base64 (alphabet and padding vary between apps).
struct PlayNonceRule: PlayIntegrityRule {
    let expected: String

    func check(_ verdict: PlayIntegrityVerdict, at time: Date) throws(AttestationFailure) -> AttestationCheck {
        let (field, value): (String, String?) = verdict.nonce != nil ? ("nonce", verdict.nonce) : ("requestHash", verdict.requestHash)
        guard let value else {
            throw AttestationFailure(.nonceMismatch, "the verdict carries neither a nonce nor a request hash")
        }
        guard Base64Variants.sameBytes(value, expected) else {
            throw AttestationFailure(.nonceMismatch, "the verdict's \(field) \(value.prefix(96)) is not the expected \(expected)")
        }
        return AttestationCheck("nonce", .passed, "\(field) \(value)")
    }
}
