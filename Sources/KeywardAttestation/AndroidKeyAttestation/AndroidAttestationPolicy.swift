// What an app accepts from an Android Key Attestation, and the checks that policy runs in order.
import KeywardJOSE

/// What an app accepts from an Android Key Attestation beyond a chain to a pinned root. The defaults are the
/// registration policy of the source design: a hardware-backed (TEE or StrongBox) ECDSA P-256 signing key,
/// generated on a device with verified boot and a locked bootloader. Package names and signing-certificate digests
/// are checked only when the app lists them (an empty list is reported as not checked).
public struct AndroidAttestationPolicy: Sendable {
    /// The key types an app registers.
    public enum KeyAlgorithmRequirement: String, Sendable, Encodable {
        /// EC on P-256: the source design's device keys (KeyMint algorithm EC, curve P_256).
        case ecP256 = "EC_P256"
        /// RSA of any size.
        case rsa = "RSA"
        /// Whatever the key is.
        case any = "ANY"
    }

    /// The attestation challenge the device must have attested: the registration's binding nonce. Only an
    /// inspection (`inspection(expectedChallenge:)`) may leave it nil; a registration always sets it.
    public var expectedChallenge: [UInt8]?
    /// Accept a key kept in software (security level Software). Default false.
    public var allowSoftware: Bool
    /// Require verified boot state Verified and a locked bootloader. Default true (production apps).
    public var requireVerifiedBoot: Bool
    /// The key type. Default EC P-256.
    public var keyAlgorithm: KeyAlgorithmRequirement
    /// Require the SIGN purpose. Default true.
    public var requireSignPurpose: Bool
    /// Require origin GENERATED (made inside the secure hardware, never imported). Default true.
    public var requireGeneratedOrigin: Bool
    /// Package names of the app; one of the attested packages must be among them. Empty: not checked.
    public var allowedPackageNames: Set<String>
    /// SHA-256 digests of the app's signing certificates; one of the attested digests must be among them.
    /// Empty: not checked.
    public var allowedSigningCertDigests: Set<[UInt8]>
    /// The public key being registered; when set, the attested leaf key must be this key.
    public var registeredPublicKey: JWK?

    /// The registration policy, with its defaults.
    public init(
        expectedChallenge: [UInt8],
        allowSoftware: Bool = false,
        requireVerifiedBoot: Bool = true,
        keyAlgorithm: KeyAlgorithmRequirement = .ecP256,
        requireSignPurpose: Bool = true,
        requireGeneratedOrigin: Bool = true,
        allowedPackageNames: Set<String> = [],
        allowedSigningCertDigests: Set<[UInt8]> = [],
        registeredPublicKey: JWK? = nil
    ) {
        self.expectedChallenge = expectedChallenge
        self.allowSoftware = allowSoftware
        self.requireVerifiedBoot = requireVerifiedBoot
        self.keyAlgorithm = keyAlgorithm
        self.requireSignPurpose = requireSignPurpose
        self.requireGeneratedOrigin = requireGeneratedOrigin
        self.allowedPackageNames = allowedPackageNames
        self.allowedSigningCertDigests = allowedSigningCertDigests
        self.registeredPublicKey = registeredPublicKey
    }

    /// Chain, challenge (when given) and hardware security level only; everything else is read and reported but
    /// not judged. What `keyward attestation verify` applies unless told otherwise.
    public static func inspection(expectedChallenge: [UInt8]?) -> AndroidAttestationPolicy {
        var policy = AndroidAttestationPolicy(
            expectedChallenge: [], requireVerifiedBoot: false, keyAlgorithm: .any, requireSignPurpose: false,
            requireGeneratedOrigin: false
        )
        policy.expectedChallenge = expectedChallenge
        return policy
    }

    /// The checks after the chain, the revocation list and the KeyDescription, in the order they run.
    var rules: [any AndroidAttestationRule] {
        [
            ChallengeRule(expected: expectedChallenge),
            SecurityLevelRule(allowSoftware: allowSoftware),
            VerifiedBootRule(required: requireVerifiedBoot),
            KeyPropertiesRule(algorithm: keyAlgorithm, requireSign: requireSignPurpose, requireGenerated: requireGeneratedOrigin),
            AppIdentityRule(packageNames: allowedPackageNames, signingCertDigests: allowedSigningCertDigests),
            RegisteredKeyRule(key: registeredPublicKey),
        ]
    }
}
