/// `AttestationApplicationId` (tag 709): the app that generated the key, as Android's package manager saw it —
/// every package sharing the app's Linux user id, and the SHA-256 digests of the app's signing certificates.
public struct AttestationApplicationId: Sendable, Equatable, Encodable {
    public struct Package: Sendable, Equatable, Encodable {
        public var name: String
        public var version: Int

        public init(name: String, version: Int) {
            self.name = name
            self.version = version
        }
    }

    public var packages: [Package]
    /// SHA-256 of each signing certificate (several after a key rotation).
    public var signatureDigests: [[UInt8]]

    public init(packages: [Package], signatureDigests: [[UInt8]]) {
        self.packages = packages
        self.signatureDigests = signatureDigests
    }

    enum CodingKeys: String, CodingKey {
        case packages, signatureDigests
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(packages, forKey: .packages)
        try container.encode(signatureDigests.map(Base64Text.init), forKey: .signatureDigests)
    }
}
