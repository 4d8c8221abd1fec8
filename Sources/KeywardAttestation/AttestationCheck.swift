/// One check of an attestation as a verifier's report lists it: passed, or not checked and why. A failed check is
/// never listed: it ends the verification with its `AttestationFailure`. Android checks: chain, revocation,
/// keyDescription, challenge, securityLevel, verifiedBoot, keyProperties, appIdentity, publicKey; Play Integrity:
/// decoding, requestPackage, nonce, timestamp, appRecognition, appIdentity, deviceIntegrity.
public struct AttestationCheck: Sendable, Equatable, Encodable {
    public enum Outcome: String, Sendable, Encodable {
        case passed = "PASSED"
        case notChecked = "NOT_CHECKED"
    }

    public let name: String
    public let outcome: Outcome
    public let detail: String

    public init(_ name: String, _ outcome: Outcome, _ detail: String) {
        self.name = name
        self.outcome = outcome
        self.detail = detail
    }
}
