// The Android attestation check that the attested key is the very key being registered.
import KeywardJOSE

/// The attested key is the key being registered (`PUBLIC_KEY_MISMATCH`): what ties the attestation to the device
/// key the server will trust. The leaf must carry the KeyDescription itself; a leaf below the attested
/// certificate was certified by an app key, not by the secure hardware.
struct RegisteredKeyRule: AndroidAttestationRule {
    let key: JWK?

    func check(_ evidence: AndroidAttestationEvidence) throws(AttestationFailure) -> AttestationCheck {
        guard let key else {
            return AttestationCheck("publicKey", .notChecked, "no registered key given")
        }
        guard evidence.keyDescriptionCertificate == 0 else {
            throw AttestationFailure(.publicKeyMismatch, "the leaf carries no KeyDescription (certificate \(evidence.keyDescriptionCertificate + 1) does), so its key is not attested")
        }
        guard let leafKey = try? JWK(subjectPublicKeyInfo: evidence.leafSubjectPublicKeyInfo) else {
            throw AttestationFailure(.publicKeyMismatch, "the leaf's key is not a key type Keyward registers")
        }
        guard leafKey.material == key.material else {
            throw AttestationFailure(.publicKeyMismatch, "the attested key (thumbprint \(leafKey.thumbprint())) is not the registered key (thumbprint \(key.thumbprint()))")
        }
        return AttestationCheck("publicKey", .passed, "the registered key, thumbprint \(key.thumbprint())")
    }
}
