// The Android Key Attestation extension's contents: key, boot state and requesting app, every field kept.
import SwiftASN1

/// The Android Key Attestation extension (OID 1.3.6.1.4.1.11129.2.1.17) of an attestation certificate: what the
/// device's Keystore says about the key the certificate certifies, the device's boot state and the app that asked.
/// Read by `init(derEncoded:)`; every field of the ASN.1 schema is kept, so the CLI can print all of it.
public struct KeyDescription: Sendable, Equatable, Encodable {
    /// The attestation schema version (1, 2, 3, 4, 100, 200, 300, 400, …).
    public var attestationVersion: Int
    /// Where the attestation was produced.
    public var attestationSecurityLevel: SecurityLevel
    /// The Keymaster or KeyMint version (KeyMint renamed the field; the schema position is the same).
    public var keymasterVersion: Int
    /// Where the key lives.
    public var keymasterSecurityLevel: SecurityLevel
    /// The challenge the app passed when it generated the key: Keyward's binding nonce.
    public var attestationChallenge: [UInt8]
    /// Empty unless the app asked for a unique id (system apps only).
    public var uniqueId: [UInt8]
    /// Properties the Android system enforces (not the secure hardware): creation time, the app's identity.
    public var softwareEnforced: AuthorizationList
    /// Properties the secure hardware (TEE or StrongBox) enforces: the ones a verdict may rest on.
    public var hardwareEnforced: AuthorizationList

    public init(
        attestationVersion: Int, attestationSecurityLevel: SecurityLevel, keymasterVersion: Int,
        keymasterSecurityLevel: SecurityLevel, attestationChallenge: [UInt8], uniqueId: [UInt8],
        softwareEnforced: AuthorizationList, hardwareEnforced: AuthorizationList
    ) {
        self.attestationVersion = attestationVersion
        self.attestationSecurityLevel = attestationSecurityLevel
        self.keymasterVersion = keymasterVersion
        self.keymasterSecurityLevel = keymasterSecurityLevel
        self.attestationChallenge = attestationChallenge
        self.uniqueId = uniqueId
        self.softwareEnforced = softwareEnforced
        self.hardwareEnforced = hardwareEnforced
    }

    /// The extension's object identifier.
    public static let oid: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]

    /// The application identity, which Android records as software-enforced; a device that puts it in the
    /// hardware list is read too.
    public var attestationApplicationId: AttestationApplicationId? {
        softwareEnforced.attestationApplicationId ?? hardwareEnforced.attestationApplicationId
    }

    /// The list whose key properties can be believed: the hardware list for a hardware key, the software list for
    /// a software key (which only a policy allowing software keys accepts).
    public var keyProperties: AuthorizationList {
        attestationSecurityLevel == .software ? softwareEnforced : hardwareEnforced
    }

    enum CodingKeys: String, CodingKey {
        case attestationVersion, attestationSecurityLevel, keymasterVersion, keymasterSecurityLevel
        case attestationChallenge, uniqueId, softwareEnforced, hardwareEnforced
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(attestationVersion, forKey: .attestationVersion)
        try container.encode(attestationSecurityLevel, forKey: .attestationSecurityLevel)
        try container.encode(keymasterVersion, forKey: .keymasterVersion)
        try container.encode(keymasterSecurityLevel, forKey: .keymasterSecurityLevel)
        try container.encode(Base64Text(attestationChallenge), forKey: .attestationChallenge)
        try container.encode(Base64Text(uniqueId), forKey: .uniqueId)
        try container.encode(softwareEnforced, forKey: .softwareEnforced)
        try container.encode(hardwareEnforced, forKey: .hardwareEnforced)
    }
}

/// `SecurityLevel`: where a key or an attestation lives.
public enum SecurityLevel: Int, Sendable, Hashable, Encodable, CustomStringConvertible {
    case software = 0
    case trustedEnvironment = 1
    case strongBox = 2

    public var description: String {
        switch self {
        case .software: "SOFTWARE"
        case .trustedEnvironment: "TRUSTED_ENVIRONMENT"
        case .strongBox: "STRONG_BOX"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
