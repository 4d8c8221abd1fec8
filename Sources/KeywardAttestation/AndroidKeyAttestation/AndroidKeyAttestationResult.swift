// What a verified Android attestation gives the server to store, and the CLI's JSON report.
import Foundation
import KeywardJOSE

/// What a verified Android attestation says, for the server (the key to register, the facts to store) and for
/// `keyward attestation verify` (printed as JSON: the fields first, then the whole KeyDescription, the
/// chain's serial numbers and every check with its outcome).
public struct AndroidKeyAttestationResult: Sendable, Encodable {
    /// Everything the extension holds.
    public let keyDescription: KeyDescription
    /// Position of the certificate carrying the KeyDescription (0: the leaf, as in every real chain).
    public let keyDescriptionCertificate: Int
    /// The leaf's SubjectPublicKeyInfo, DER: the key the server stores.
    public let subjectPublicKeyInfo: [UInt8]
    /// The leaf's key as a JWK (EC P-256/384/521, RSA ≥ 2048 bits); nil for a key KeywardJOSE does not take.
    public let publicKey: JWK?
    /// Serial numbers of the chain, leaf first, as the revocation list writes them.
    public let certificateSerials: [String]
    public let verifiedAt: Date
    /// The checks that ran, in order, each passed or not checked.
    public let checks: [AttestationCheck]

    init(
        keyDescription: KeyDescription, keyDescriptionCertificate: Int, leafSubjectPublicKeyInfo: [UInt8],
        certificateSerials: [String], verifiedAt: Date, checks: [AttestationCheck]
    ) {
        self.keyDescription = keyDescription
        self.keyDescriptionCertificate = keyDescriptionCertificate
        self.subjectPublicKeyInfo = leafSubjectPublicKeyInfo
        self.publicKey = try? JWK(subjectPublicKeyInfo: leafSubjectPublicKeyInfo)
        self.certificateSerials = certificateSerials
        self.verifiedAt = verifiedAt
        self.checks = checks
    }

    public var attestationVersion: Int { keyDescription.attestationVersion }
    public var attestationSecurityLevel: SecurityLevel { keyDescription.attestationSecurityLevel }
    public var keymasterSecurityLevel: SecurityLevel { keyDescription.keymasterSecurityLevel }
    public var attestationChallenge: [UInt8] { keyDescription.attestationChallenge }
    /// From the hardware-enforced root of trust; nil when the hardware recorded none.
    public var verifiedBootState: VerifiedBootState? { keyDescription.hardwareEnforced.rootOfTrust?.verifiedBootState }
    public var deviceLocked: Bool? { keyDescription.hardwareEnforced.rootOfTrust?.deviceLocked }
    public var packageNames: [String] { keyDescription.attestationApplicationId?.packages.map(\.name) ?? [] }
    public var signingCertDigests: [[UInt8]] { keyDescription.attestationApplicationId?.signatureDigests ?? [] }
    /// Key properties from the list the key's security level enforces.
    public var purposes: [KeyPurpose] { keyDescription.keyProperties.purposes ?? [] }
    public var algorithm: KeyAlgorithm? { keyDescription.keyProperties.algorithm }
    public var ecCurve: ECCurve? { keyDescription.keyProperties.ecCurve }
    public var origin: KeyOrigin? { keyDescription.keyProperties.origin }

    enum CodingKeys: String, CodingKey {
        case attestationVersion, attestationSecurityLevel, keymasterSecurityLevel, attestationChallenge
        case verifiedBootState, deviceLocked, packageNames, signingCertDigests, purposes, algorithm, ecCurve, origin
        case publicKey, subjectPublicKeyInfo, keyDescription, keyDescriptionCertificate, certificateSerials
        case verifiedAt, checks
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(attestationVersion, forKey: .attestationVersion)
        try container.encode(attestationSecurityLevel, forKey: .attestationSecurityLevel)
        try container.encode(keymasterSecurityLevel, forKey: .keymasterSecurityLevel)
        try container.encode(Base64Text(attestationChallenge), forKey: .attestationChallenge)
        try container.encodeIfPresent(verifiedBootState, forKey: .verifiedBootState)
        try container.encodeIfPresent(deviceLocked, forKey: .deviceLocked)
        try container.encode(packageNames, forKey: .packageNames)
        try container.encode(signingCertDigests.map(Base64Text.init), forKey: .signingCertDigests)
        try container.encode(purposes, forKey: .purposes)
        try container.encodeIfPresent(algorithm, forKey: .algorithm)
        try container.encodeIfPresent(ecCurve, forKey: .ecCurve)
        try container.encodeIfPresent(origin, forKey: .origin)
        // A JWK's public members are all strings (RFC 7517/7518).
        try container.encodeIfPresent(publicKey.map { $0.jsonObject.compactMapValues(\.stringValue) }, forKey: .publicKey)
        try container.encode(Base64Text(subjectPublicKeyInfo), forKey: .subjectPublicKeyInfo)
        try container.encode(keyDescription, forKey: .keyDescription)
        try container.encode(keyDescriptionCertificate, forKey: .keyDescriptionCertificate)
        try container.encode(certificateSerials, forKey: .certificateSerials)
        try container.encode(verifiedAt.formatted(.iso8601), forKey: .verifiedAt)
        try container.encode(checks, forKey: .checks)
    }
}
