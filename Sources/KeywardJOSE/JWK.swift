// Public JSON Web Keys: parsed and validated once, thumbprinted, and used to verify signatures.
import Crypto
import _CryptoExtras

/// A public JSON Web Key (RFC 7517) that KeywardJOSE can verify with.
///
/// Parsing validates the key fully (curve membership, RSA size and exponent) and keeps the ready swift-crypto
/// key, so a DPoP check parses the header key once and verifies with it without rebuilding it.
public struct JWK: Sendable, Hashable {
    public enum Material: Sendable, Hashable {
        case rsa(n: [UInt8], e: [UInt8])
        case ec(curve: String, x: [UInt8], y: [UInt8])
        case okp(curve: String, x: [UInt8])
    }

    public let material: Material
    public var kid: String?
    public var alg: JWSAlgorithm?
    public var use: String?
    let verifier: PublicKeyVerifier

    static let privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]
    static let minimumRSABits = 2048
    /// BoringSSL's own verification limit; larger moduli would only be a CPU sink.
    static let maximumRSABits = 16384

    init(material: Material, verifier: PublicKeyVerifier, kid: String? = nil, alg: JWSAlgorithm? = nil, use: String? = nil) {
        self.material = material
        self.verifier = verifier
        self.kid = kid
        self.alg = alg
        self.use = use
    }

    /// Builds and validates a public key from its raw material.
    public init(material: Material, kid: String? = nil, alg: JWSAlgorithm? = nil, use: String? = nil) throws(JOSEError) {
        self.material = material
        self.verifier = try PublicKeyVerifier(material: material)
        self.kid = kid
        self.alg = alg
        self.use = use
        if let alg, !isCompatible(with: alg) {
            throw JOSEError(.algorithmKeyMismatch, "JWK alg \(alg.rawValue) does not fit a \(material.keyTypeDescription) key")
        }
    }

    /// How EC coordinates are read. RFC 7518 §6.2.1.2 makes each coordinate the full size of the curve; some
    /// clients (the Keycloak push-MFA extension's demo clients among them) write minimal big-endian integers
    /// instead, one byte short whenever the first byte is zero, and Keycloak accepts them.
    public enum CoordinateForm: Sendable {
        /// Exactly the curve's size: keys Keyward publishes, stores, or reads from a JWKS.
        case fullSize
        /// A shorter coordinate is left-padded with zero bytes to the curve's size, so the key, its
        /// serialization and its RFC 7638 thumbprint are those of the full-size form: keys a client presents
        /// as its own (DPoP proofs, device enrollment and rotation).
        case padShort
    }

    /// Coordinate size in bytes of a supported curve.
    static func coordinateSize(of curve: String) -> Int? {
        switch curve {
        case "P-256": 32
        case "P-384": 48
        case "P-521": 66
        default: nil
        }
    }

    public init(json: JSONObject, coordinates: CoordinateForm = .fullSize) throws(JOSEError) {
        guard let kty = json["kty"] else { throw JOSEError(.invalidKey, "JWK has no \"kty\"") }
        guard let kty = kty.stringValue else { throw JOSEError(.invalidKey, "JWK \"kty\" is not a string") }
        if kty == "oct" { throw JOSEError(.unsupportedKey, "symmetric (kty \"oct\") JWKs are not accepted") }
        for member in Self.privateMembers where json[member] != nil {
            throw JOSEError(.privateKeyMaterial, "JWK contains private member \"\(member)\"")
        }

        let material: Material
        switch kty {
        case "RSA":
            let n = try Self.bytes(json, "n")
            let e = try Self.bytes(json, "e")
            material = .rsa(n: n, e: e)
        case "EC":
            let curve = try Self.curve(json, allowed: ["P-256", "P-384", "P-521"])
            var x = try Self.bytes(json, "x")
            var y = try Self.bytes(json, "y")
            if coordinates == .padShort, let size = Self.coordinateSize(of: curve) {
                x = Self.leftPadded(x, to: size)
                y = Self.leftPadded(y, to: size)
            }
            material = .ec(curve: curve, x: x, y: y)
        case "OKP":
            let curve = try Self.curve(json, allowed: ["Ed25519"])
            material = .okp(curve: curve, x: try Self.bytes(json, "x"))
        default:
            throw JOSEError(.unsupportedKey, "JWK kty \"\(displayable(kty))\" is not supported")
        }

        var alg: JWSAlgorithm?
        if let value = json["alg"] {
            guard let name = value.stringValue else { throw JOSEError(.invalidKey, "JWK \"alg\" is not a string") }
            guard let known = JWSAlgorithm(rawValue: name) else {
                throw JOSEError(.unsupportedKey, "JWK alg \"\(displayable(name))\" is not a supported signature algorithm")
            }
            alg = known
        }
        var kid: String?
        if let value = json["kid"] {
            guard let string = value.stringValue else { throw JOSEError(.invalidKey, "JWK \"kid\" is not a string") }
            kid = string
        }
        var use: String?
        if let value = json["use"] {
            guard let string = value.stringValue else { throw JOSEError(.invalidKey, "JWK \"use\" is not a string") }
            use = string
        }
        try self.init(material: material, kid: kid, alg: alg, use: use)
    }

    public init(jsonString: String) throws(JOSEError) {
        try self.init(json: StrictJSON.parseObject(Array(jsonString.utf8)))
    }

    private static func bytes(_ json: JSONObject, _ member: String) throws(JOSEError) -> [UInt8] {
        guard let value = json[member] else { throw JOSEError(.invalidKey, "JWK has no \"\(member)\"") }
        guard let text = value.stringValue else { throw JOSEError(.invalidKey, "JWK \"\(member)\" is not a string") }
        do throws(JOSEError) {
            return try Base64URL.decode(text)
        } catch {
            throw JOSEError(.invalidKey, "JWK \"\(member)\": \(error.message)")
        }
    }

    /// An empty coordinate is left as it is (and refused); a longer one too.
    private static func leftPadded(_ bytes: [UInt8], to size: Int) -> [UInt8] {
        guard !bytes.isEmpty, bytes.count < size else { return bytes }
        return [UInt8](repeating: 0, count: size - bytes.count) + bytes
    }

    private static func curve(_ json: JSONObject, allowed: [String]) throws(JOSEError) -> String {
        guard let value = json["crv"] else { throw JOSEError(.invalidKey, "JWK has no \"crv\"") }
        guard let curve = value.stringValue else { throw JOSEError(.invalidKey, "JWK \"crv\" is not a string") }
        guard allowed.contains(curve) else {
            throw JOSEError(.unsupportedKey, "JWK curve \"\(displayable(curve))\" is not supported")
        }
        return curve
    }

    /// The public members, plus kid/alg/use when set.
    public var jsonObject: JSONObject {
        var object = requiredMembers
        if let kid { object["kid"] = .string(kid) }
        if let alg { object["alg"] = .string(alg.rawValue) }
        if let use { object["use"] = .string(use) }
        return object
    }

    /// The members RFC 7638 §3.2 lists per key type; also the minimal form to embed in a DPoP header.
    public var requiredMembers: JSONObject {
        switch material {
        case .rsa(let n, let e):
            ["kty": "RSA", "n": .string(Base64URL.encode(n)), "e": .string(Base64URL.encode(e))]
        case .ec(let curve, let x, let y):
            ["kty": "EC", "crv": .string(curve), "x": .string(Base64URL.encode(x)), "y": .string(Base64URL.encode(y))]
        case .okp(let curve, let x):
            ["kty": "OKP", "crv": .string(curve), "x": .string(Base64URL.encode(x))]
        }
    }

    /// RFC 7638 thumbprint with SHA-256, base64url. Our serializer already sorts members and
    /// writes no whitespace, which is exactly the RFC's canonical form for these ASCII-only members.
    public func thumbprint() -> String {
        Base64URL.encode(SHA256.hash(data: StrictJSON.serialize(requiredMembers)))
    }

    public func isCompatible(with alg: JWSAlgorithm) -> Bool {
        switch material {
        case .rsa: alg.isRSA
        case .ec(let curve, _, _), .okp(let curve, _): alg.curve == curve
        }
    }

    /// Whether `algorithm` may be used with this key: the key type fits it and the key is not pinned to another.
    public func fits(_ algorithm: JWSAlgorithm) -> Bool {
        isCompatible(with: algorithm) && (alg == nil || alg == algorithm)
    }

    /// Verifies a JOSE-format signature. ECDSA signatures must be the raw r||s of exactly twice the coordinate
    /// size; DER is refused so that one signature has one encoding.
    public func verify(signature: [UInt8], over signingInput: [UInt8], algorithm: JWSAlgorithm) -> Bool {
        guard fits(algorithm) else { return false }
        return verifier.verify(signature: signature, over: signingInput, algorithm: algorithm)
    }

    public static func == (lhs: JWK, rhs: JWK) -> Bool {
        lhs.material == rhs.material && lhs.kid == rhs.kid && lhs.alg == rhs.alg && lhs.use == rhs.use
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(material)
        hasher.combine(kid)
        hasher.combine(alg)
        hasher.combine(use)
    }
}

extension JWK.Material {
    var keyTypeDescription: String {
        switch self {
        case .rsa: "RSA"
        case .ec(let curve, _, _): "EC \(curve)"
        case .okp(let curve, _): "OKP \(curve)"
        }
    }
}
