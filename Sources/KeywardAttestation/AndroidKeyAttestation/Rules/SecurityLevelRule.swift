/// The key and its attestation live in secure hardware, TEE or StrongBox (`SOFTWARE_KEY`), unless the policy
/// accepts software keys. A software attestation proves nothing about the device, only that some code ran.
struct SecurityLevelRule: AndroidAttestationRule {
    let allowSoftware: Bool

    func check(_ evidence: AndroidAttestationEvidence) throws(AttestationFailure) -> AttestationCheck {
        let description = evidence.keyDescription
        let levels = "attestation \(description.attestationSecurityLevel), keymaster \(description.keymasterSecurityLevel)"
        if allowSoftware {
            return AttestationCheck("securityLevel", .notChecked, "software keys allowed (\(levels))")
        }
        guard description.attestationSecurityLevel != .software, description.keymasterSecurityLevel != .software else {
            throw AttestationFailure(.softwareKey, "the key is not hardware-backed: \(levels)")
        }
        return AttestationCheck("securityLevel", .passed, levels)
    }
}
