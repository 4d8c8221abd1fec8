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
    func check(_ evidence: AndroidAttestationEvidence) throws(AttestationFailure) -> AttestationCheck
}
