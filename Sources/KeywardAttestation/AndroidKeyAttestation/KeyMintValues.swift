// The numbered values of KeyMint's (earlier Keymaster's) authorization tags, as the KeyDescription writes them.
// Each keeps the number it was read with, so a value this build does not know is still reported, not refused:
// devices gain values (purposes, curves) faster than verifiers learn them.

/// A KeyMint enumeration value, printed by its KeyMint name when known and as its number otherwise.
public protocol KeyMintValue: RawRepresentable<Int>, Sendable, Hashable, Encodable, CustomStringConvertible {
    static var names: [Int: String] { get }
    init(rawValue: Int)
}

extension KeyMintValue {
    public var name: String? { Self.names[rawValue] }
    public var description: String { name ?? String(rawValue) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// `KeyPurpose` (tag 1): what the key may be used for.
public struct KeyPurpose: KeyMintValue {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let encrypt = KeyPurpose(rawValue: 0)
    public static let decrypt = KeyPurpose(rawValue: 1)
    public static let sign = KeyPurpose(rawValue: 2)
    public static let verify = KeyPurpose(rawValue: 3)
    public static let wrapKey = KeyPurpose(rawValue: 5)
    public static let agreeKey = KeyPurpose(rawValue: 6)
    public static let attestKey = KeyPurpose(rawValue: 7)
    public static let names = [0: "ENCRYPT", 1: "DECRYPT", 2: "SIGN", 3: "VERIFY", 4: "DERIVE_KEY", 5: "WRAP_KEY",
                               6: "AGREE_KEY", 7: "ATTEST_KEY"]
}

/// `Algorithm` (tag 2).
public struct KeyAlgorithm: KeyMintValue {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let rsa = KeyAlgorithm(rawValue: 1)
    public static let ec = KeyAlgorithm(rawValue: 3)
    public static let names = [1: "RSA", 3: "EC", 32: "AES", 33: "TRIPLE_DES", 128: "HMAC"]
}

/// `EcCurve` (tag 10).
public struct ECCurve: KeyMintValue {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let p256 = ECCurve(rawValue: 1)
    public static let names = [0: "P_224", 1: "P_256", 2: "P_384", 3: "P_521", 4: "CURVE_25519"]
}

/// `Digest` (tags 5 and 203).
public struct KeyDigest: KeyMintValue {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let names = [0: "NONE", 1: "MD5", 2: "SHA1", 3: "SHA_2_224", 4: "SHA_2_256", 5: "SHA_2_384",
                               6: "SHA_2_512"]
}

/// `PaddingMode` (tag 6).
public struct KeyPadding: KeyMintValue {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let names = [1: "NONE", 2: "RSA_OAEP", 3: "RSA_PSS", 4: "RSA_PKCS1_1_5_ENCRYPT",
                               5: "RSA_PKCS1_1_5_SIGN", 64: "PKCS7"]
}

/// `BlockMode` (tag 4).
public struct KeyBlockMode: KeyMintValue {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let names = [1: "ECB", 2: "CBC", 3: "CTR", 32: "GCM"]
}

/// `KeyOrigin` (tag 702): where the key came from. Only a key generated inside the secure hardware proves that
/// its private half never existed outside it.
public struct KeyOrigin: KeyMintValue {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let generated = KeyOrigin(rawValue: 0)
    public static let names = [0: "GENERATED", 1: "DERIVED", 2: "IMPORTED", 3: "RESERVED", 4: "SECURELY_IMPORTED"]
}
