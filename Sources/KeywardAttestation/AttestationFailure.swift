/// Why an attestation, an assertion or a Play Integrity verdict was refused. The raw values are stable codes:
/// the device API, the audit log and `keyward attestation verify` all print them, and clients may match on them.
public enum AttestationReason: String, Sendable, Hashable, CaseIterable, Codable {
    /// Input that cannot be read at all: bad base64, CBOR, DER, JSON or JWE structure, a missing field.
    case malformed = "MALFORMED"
    /// The certificate chain does not lead to a pinned root at the verification time.
    case chainInvalid = "CHAIN_INVALID"
    /// A certificate was signed with an algorithm this build cannot verify (ML-DSA chains of the newest devices).
    case unsupportedAlgorithm = "UNSUPPORTED_ALGORITHM"
    /// A certificate of the chain is on the configured revocation list.
    case revoked = "REVOKED"
    /// The attested nonce is not the one derived from this registration's challenge and key.
    case nonceMismatch = "NONCE_MISMATCH"
    /// The challenge a device attested is not the expected one (Android `attestationChallenge`).
    case challengeMismatch = "CHALLENGE_MISMATCH"
    /// App Attest key id, credential id or certified key disagree with each other.
    case keyIdMismatch = "KEY_ID_MISMATCH"
    /// The attested key is not the key being registered.
    case publicKeyMismatch = "PUBLIC_KEY_MISMATCH"
    /// authData names another app (SHA-256 of TEAMID.bundle.id).
    case rpIdMismatch = "RP_ID_MISMATCH"
    /// Development attestation for a production app, or the reverse.
    case aaguidMismatch = "AAGUID_MISMATCH"
    /// An attestation whose counter is not 0, or an assertion whose counter does not exceed the stored one.
    case counterNotIncreasing = "COUNTER_NOT_INCREASING"
    /// A signature (assertion, inner JWS) does not verify with the key it must verify with.
    case signatureInvalid = "SIGNATURE_INVALID"
    /// Android: the key lives in software (security level Software) and the policy wants hardware.
    case softwareKey = "SOFTWARE_KEY"
    /// Android: verified boot state or bootloader lock refused by the policy.
    case bootStateRefused = "BOOT_STATE_REFUSED"
    /// Android: the key's algorithm, curve, purpose or origin is not what the policy asks for.
    case keyPropertiesRefused = "KEY_PROPERTIES_REFUSED"
    /// The package name or signing-certificate digest is not on the app's allow-list.
    case appIdentityMismatch = "APP_IDENTITY_MISMATCH"
    /// Play Integrity: the token cannot be decrypted with the configured key (wrong key or tampered ciphertext).
    case undecryptable = "UNDECRYPTABLE"
    /// Play Integrity: the verdict's request timestamp is outside the allowed window.
    case stale = "STALE"
    /// Play Integrity: the app is not `PLAY_RECOGNIZED`.
    case appNotRecognized = "APP_NOT_RECOGNIZED"
    /// Play Integrity: the device verdict lacks the integrity level the policy asks for.
    case deviceIntegrityRefused = "DEVICE_INTEGRITY_REFUSED"
    /// Play Integrity, decoded by Google: the decoding service could not be asked or gave no usable answer (network,
    /// credentials, quota, an answer without a verdict). Says nothing about the device: the caller may retry later.
    case verifierUnavailable = "VERIFIER_UNAVAILABLE"
}

/// A refused attestation: the stable reason and a sentence for logs and operators naming the check and the values
/// involved. The detail never goes back to an unauthenticated client verbatim beyond what the reason says.
public struct AttestationFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: AttestationReason
    public let detail: String

    public init(_ reason: AttestationReason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    public var description: String { "\(reason.rawValue): \(detail)" }
}
