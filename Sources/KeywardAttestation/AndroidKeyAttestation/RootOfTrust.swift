/// `RootOfTrust` (tag 704): the verified-boot facts the bootloader handed to the secure hardware.
public struct RootOfTrust: Sendable, Equatable, Encodable {
    /// SHA-256 of the key that verified the boot image (all zeros or empty on an unlocked device).
    public var verifiedBootKey: [UInt8]
    public var deviceLocked: Bool
    public var verifiedBootState: VerifiedBootState
    /// Digest of the verified boot data; absent before attestation version 3.
    public var verifiedBootHash: [UInt8]?

    public init(verifiedBootKey: [UInt8], deviceLocked: Bool, verifiedBootState: VerifiedBootState, verifiedBootHash: [UInt8]?) {
        self.verifiedBootKey = verifiedBootKey
        self.deviceLocked = deviceLocked
        self.verifiedBootState = verifiedBootState
        self.verifiedBootHash = verifiedBootHash
    }

    enum CodingKeys: String, CodingKey {
        case verifiedBootKey, deviceLocked, verifiedBootState, verifiedBootHash
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Base64Text(verifiedBootKey), forKey: .verifiedBootKey)
        try container.encode(deviceLocked, forKey: .deviceLocked)
        try container.encode(verifiedBootState, forKey: .verifiedBootState)
        try container.encodeIfPresent(verifiedBootHash.map(Base64Text.init), forKey: .verifiedBootHash)
    }
}

/// `VerifiedBootState`: Verified (Google's or the OEM's key, locked), SelfSigned (a user-installed key), Unverified
/// (unlocked bootloader) or Failed.
public enum VerifiedBootState: Int, Sendable, Hashable, Encodable, CustomStringConvertible {
    case verified = 0
    case selfSigned = 1
    case unverified = 2
    case failed = 3

    public var description: String {
        switch self {
        case .verified: "VERIFIED"
        case .selfSigned: "SELF_SIGNED"
        case .unverified: "UNVERIFIED"
        case .failed: "FAILED"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
