// Reading a public JWK from a DER SubjectPublicKeyInfo, as certificates and PEM public keys carry it.
import Crypto
import _CryptoExtras

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension JWK {
    /// DER of SubjectPublicKeyInfo { AlgorithmIdentifier { id-Ed25519 }, BIT STRING (32 bytes) } up to the key
    /// (RFC 8410 §4): the only Ed25519 encoding there is, so a prefix check reads it.
    private static let ed25519InfoPrefix: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00]

    /// A public key from its DER SubjectPublicKeyInfo (RFC 5280 §4.1.2.7), as an X.509 certificate or a PEM
    /// "PUBLIC KEY" block carries it: RSA (2048 bits or more), EC on P-256, P-384 or P-521, or Ed25519.
    /// The key is validated as `init(json:)` validates one.
    public init(subjectPublicKeyInfo der: [UInt8], kid: String? = nil) throws(JOSEError) {
        try self.init(material: Self.material(subjectPublicKeyInfo: der), kid: kid)
    }

    private static func material(subjectPublicKeyInfo der: [UInt8]) throws(JOSEError) -> Material {
        if der.count == ed25519InfoPrefix.count + 32, der.starts(with: ed25519InfoPrefix) {
            return .okp(curve: "Ed25519", x: Array(der.dropFirst(ed25519InfoPrefix.count)))
        }
        if let point = try? P256.Signing.PublicKey(derRepresentation: der).x963Representation {
            return ecMaterial(curve: "P-256", point: point)
        }
        if let point = try? P384.Signing.PublicKey(derRepresentation: der).x963Representation {
            return ecMaterial(curve: "P-384", point: point)
        }
        if let point = try? P521.Signing.PublicKey(derRepresentation: der).x963Representation {
            return ecMaterial(curve: "P-521", point: point)
        }
        if let rsa = try? _RSA.Signing.PublicKey(unsafeDERRepresentation: der), let primitives = try? rsa.getKeyPrimitives() {
            // Minimal big-endian integers, as RFC 7518 §6.3.1 writes n and e.
            return .rsa(n: Array(primitives.modulus.drop { $0 == 0 }), e: Array(primitives.publicExponent.drop { $0 == 0 }))
        }
        throw JOSEError(.unsupportedKey, "the public key is not RSA, EC on P-256/P-384/P-521 or Ed25519, or its DER is malformed")
    }

    /// x9.63 uncompressed point: 0x04 ‖ x ‖ y.
    private static func ecMaterial(curve: String, point: Data) -> Material {
        let coordinates = point.dropFirst()
        let half = coordinates.count / 2
        return .ec(curve: curve, x: Array(coordinates.prefix(half)), y: Array(coordinates.suffix(half)))
    }
}
