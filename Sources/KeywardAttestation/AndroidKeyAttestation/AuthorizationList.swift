/// `AuthorizationList`: the key's properties, each under its KeyMint tag number (EXPLICIT context-specific tags,
/// written in ascending order). Every tag of the attestation schema up to version 400 is read; a tag this build
/// does not know is listed in `unknownTags` rather than refused, since new Android releases add tags.
public struct AuthorizationList: Sendable, Equatable, Encodable {
    public var purposes: [KeyPurpose]?
    public var algorithm: KeyAlgorithm?
    public var keySize: Int?
    public var blockModes: [KeyBlockMode]?
    public var digests: [KeyDigest]?
    public var paddings: [KeyPadding]?
    public var callerNonce = false
    public var minMacLength: Int?
    public var ecCurve: ECCurve?
    public var rsaPublicExponent: Int?
    public var mgfDigests: [KeyDigest]?
    public var rollbackResistance = false
    public var earlyBootOnly = false
    /// Milliseconds since 1970, as every date of the list.
    public var activeDateTime: Int?
    public var originationExpireDateTime: Int?
    public var usageExpireDateTime: Int?
    public var usageCountLimit: Int?
    public var noAuthRequired = false
    /// `HardwareAuthenticatorType` bits: 1 password, 2 fingerprint.
    public var userAuthType: Int?
    /// Seconds a user authentication stays valid.
    public var authTimeout: Int?
    public var allowWhileOnBody = false
    public var trustedUserPresenceRequired = false
    public var trustedConfirmationRequired = false
    public var unlockedDeviceRequired = false
    /// Keymaster 1 and 2 only.
    public var allApplications = false
    public var applicationId: [UInt8]?
    public var creationDateTime: Int?
    public var origin: KeyOrigin?
    /// Keymaster 2's name for rollback resistance.
    public var rollbackResistant = false
    public var rootOfTrust: RootOfTrust?
    /// Android version as MMmmpp (140000 = 14.0.0).
    public var osVersion: Int?
    /// YYYYMM.
    public var osPatchLevel: Int?
    public var attestationApplicationId: AttestationApplicationId?
    public var attestationIdBrand: [UInt8]?
    public var attestationIdDevice: [UInt8]?
    public var attestationIdProduct: [UInt8]?
    public var attestationIdSerial: [UInt8]?
    public var attestationIdImei: [UInt8]?
    public var attestationIdMeid: [UInt8]?
    public var attestationIdManufacturer: [UInt8]?
    public var attestationIdModel: [UInt8]?
    /// YYYYMMDD.
    public var vendorPatchLevel: Int?
    /// YYYYMMDD.
    public var bootPatchLevel: Int?
    public var deviceUniqueAttestation = false
    public var attestationIdSecondImei: [UInt8]?
    /// SHA-256 over the APEX modules the device runs (attestation version 400).
    public var moduleHash: [UInt8]?
    /// Tags present in the list that this build does not read, in the order they came.
    public var unknownTags: [Int] = []

    public init() {}

    enum CodingKeys: String, CodingKey {
        case purposes, algorithm, keySize, blockModes, digests, paddings, callerNonce, minMacLength, ecCurve
        case rsaPublicExponent, mgfDigests, rollbackResistance, earlyBootOnly, activeDateTime
        case originationExpireDateTime, usageExpireDateTime, usageCountLimit, noAuthRequired, userAuthType
        case authTimeout, allowWhileOnBody, trustedUserPresenceRequired, trustedConfirmationRequired
        case unlockedDeviceRequired, allApplications, applicationId, creationDateTime, origin, rollbackResistant
        case rootOfTrust, osVersion, osPatchLevel, attestationApplicationId, attestationIdBrand, attestationIdDevice
        case attestationIdProduct, attestationIdSerial, attestationIdImei, attestationIdMeid
        case attestationIdManufacturer, attestationIdModel, vendorPatchLevel, bootPatchLevel
        case deviceUniqueAttestation, attestationIdSecondImei, moduleHash, unknownTags
    }

    /// Only what is present: a flag when set, a value when read. Device identifiers (brand, model, IMEI…) are
    /// text; the other byte fields base64.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        func flag(_ value: Bool, _ key: CodingKeys) throws {
            if value { try container.encode(true, forKey: key) }
        }
        func text(_ value: [UInt8]?, _ key: CodingKeys) throws {
            try container.encodeIfPresent(value.map { String(decoding: $0, as: UTF8.self) }, forKey: key)
        }
        try container.encodeIfPresent(purposes, forKey: .purposes)
        try container.encodeIfPresent(algorithm, forKey: .algorithm)
        try container.encodeIfPresent(keySize, forKey: .keySize)
        try container.encodeIfPresent(blockModes, forKey: .blockModes)
        try container.encodeIfPresent(digests, forKey: .digests)
        try container.encodeIfPresent(paddings, forKey: .paddings)
        try flag(callerNonce, .callerNonce)
        try container.encodeIfPresent(minMacLength, forKey: .minMacLength)
        try container.encodeIfPresent(ecCurve, forKey: .ecCurve)
        try container.encodeIfPresent(rsaPublicExponent, forKey: .rsaPublicExponent)
        try container.encodeIfPresent(mgfDigests, forKey: .mgfDigests)
        try flag(rollbackResistance, .rollbackResistance)
        try flag(earlyBootOnly, .earlyBootOnly)
        try container.encodeIfPresent(activeDateTime, forKey: .activeDateTime)
        try container.encodeIfPresent(originationExpireDateTime, forKey: .originationExpireDateTime)
        try container.encodeIfPresent(usageExpireDateTime, forKey: .usageExpireDateTime)
        try container.encodeIfPresent(usageCountLimit, forKey: .usageCountLimit)
        try flag(noAuthRequired, .noAuthRequired)
        try container.encodeIfPresent(userAuthType, forKey: .userAuthType)
        try container.encodeIfPresent(authTimeout, forKey: .authTimeout)
        try flag(allowWhileOnBody, .allowWhileOnBody)
        try flag(trustedUserPresenceRequired, .trustedUserPresenceRequired)
        try flag(trustedConfirmationRequired, .trustedConfirmationRequired)
        try flag(unlockedDeviceRequired, .unlockedDeviceRequired)
        try flag(allApplications, .allApplications)
        try container.encodeIfPresent(applicationId.map(Base64Text.init), forKey: .applicationId)
        try container.encodeIfPresent(creationDateTime, forKey: .creationDateTime)
        try container.encodeIfPresent(origin, forKey: .origin)
        try flag(rollbackResistant, .rollbackResistant)
        try container.encodeIfPresent(rootOfTrust, forKey: .rootOfTrust)
        try container.encodeIfPresent(osVersion, forKey: .osVersion)
        try container.encodeIfPresent(osPatchLevel, forKey: .osPatchLevel)
        try container.encodeIfPresent(attestationApplicationId, forKey: .attestationApplicationId)
        try text(attestationIdBrand, .attestationIdBrand)
        try text(attestationIdDevice, .attestationIdDevice)
        try text(attestationIdProduct, .attestationIdProduct)
        try text(attestationIdSerial, .attestationIdSerial)
        try text(attestationIdImei, .attestationIdImei)
        try text(attestationIdMeid, .attestationIdMeid)
        try text(attestationIdManufacturer, .attestationIdManufacturer)
        try text(attestationIdModel, .attestationIdModel)
        try container.encodeIfPresent(vendorPatchLevel, forKey: .vendorPatchLevel)
        try container.encodeIfPresent(bootPatchLevel, forKey: .bootPatchLevel)
        try flag(deviceUniqueAttestation, .deviceUniqueAttestation)
        try text(attestationIdSecondImei, .attestationIdSecondImei)
        try container.encodeIfPresent(moduleHash.map(Base64Text.init), forKey: .moduleHash)
        if !unknownTags.isEmpty { try container.encode(unknownTags, forKey: .unknownTags) }
    }
}
