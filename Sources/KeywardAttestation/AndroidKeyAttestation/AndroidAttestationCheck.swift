/// One check of an Android attestation as the report lists it: passed, or not checked and why. A failed check is
/// never listed: it ends the verification with its `AttestationFailure`.
public struct AndroidAttestationCheck: Sendable, Equatable, Encodable {
    public enum Outcome: String, Sendable, Encodable {
        case passed = "PASSED"
        case notChecked = "NOT_CHECKED"
    }

    /// chain, revocation, keyDescription, challenge, securityLevel, verifiedBoot, keyProperties, appIdentity,
    /// publicKey.
    public let name: String
    public let outcome: Outcome
    public let detail: String

    public init(_ name: String, _ outcome: Outcome, _ detail: String) {
        self.name = name
        self.outcome = outcome
        self.detail = detail
    }
}

/// What the policy's rules judge: a chain that verified to a pinned root, and the KeyDescription it carries.
struct AndroidAttestationEvidence {
    let keyDescription: KeyDescription
    /// Position in the chain of the certificate carrying the KeyDescription (0: the leaf).
    let keyDescriptionCertificate: Int
    /// The leaf's SubjectPublicKeyInfo DER.
    let leafSubjectPublicKeyInfo: [UInt8]
}

/// One rule of `AndroidAttestationPolicy`: refuses with its own stable reason, or says what it found.
protocol AndroidAttestationRule: Sendable {
    func check(_ evidence: AndroidAttestationEvidence) throws(AttestationFailure) -> AndroidAttestationCheck
}
