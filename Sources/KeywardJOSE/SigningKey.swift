// Private keys for each JWS algorithm: generating, loading from DER or PEM, signing in JOSE form.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Crypto
import _CryptoExtras

/// A private key bound to one JWS algorithm.
public struct SigningKey: Sendable {
    enum Backing: Sendable {
        case p256(P256.Signing.PrivateKey)
        case p384(P384.Signing.PrivateKey)
        case p521(P521.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
    }

    public let algorithm: JWSAlgorithm
    let backing: Backing

    private init(algorithm: JWSAlgorithm, backing: Backing) {
        self.algorithm = algorithm
        self.backing = backing
    }

    public static func generate(_ algorithm: JWSAlgorithm) throws(JOSEError) -> SigningKey {
        try generate(algorithm, rsaBits: 2048)
    }

    public static func generate(_ algorithm: JWSAlgorithm, rsaBits: Int) throws(JOSEError) -> SigningKey {
        switch algorithm {
        case .es256: return SigningKey(algorithm: algorithm, backing: .p256(P256.Signing.PrivateKey()))
        case .es384: return SigningKey(algorithm: algorithm, backing: .p384(P384.Signing.PrivateKey()))
        case .es512: return SigningKey(algorithm: algorithm, backing: .p521(P521.Signing.PrivateKey()))
        case .edDSA: return SigningKey(algorithm: algorithm, backing: .ed25519(Curve25519.Signing.PrivateKey()))
        case .rs256, .rs384, .rs512, .ps256:
            guard rsaBits >= JWK.minimumRSABits, rsaBits <= JWK.maximumRSABits, rsaBits % 8 == 0 else {
                throw JOSEError(.weakKey, "RSA key size \(rsaBits) is not allowed (2048...16384, whole bytes)")
            }
            do {
                let key = try _RSA.Signing.PrivateKey(keySize: .init(bitCount: rsaBits))
                return SigningKey(algorithm: algorithm, backing: .rsa(key))
            } catch {
                throw JOSEError(.invalidKey, "RSA key generation failed")
            }
        }
    }

    /// Accepts what `serialized` produces: PKCS#8 / SEC1 DER for EC, PKCS#1 or PKCS#8 DER for RSA,
    /// the raw 32-byte seed for Ed25519.
    public init(algorithm: JWSAlgorithm, serialized: [UInt8]) throws(JOSEError) {
        let backing: Backing
        do {
            switch algorithm {
            case .es256: backing = .p256(try P256.Signing.PrivateKey(derRepresentation: serialized))
            case .es384: backing = .p384(try P384.Signing.PrivateKey(derRepresentation: serialized))
            case .es512: backing = .p521(try P521.Signing.PrivateKey(derRepresentation: serialized))
            case .edDSA: backing = .ed25519(try Curve25519.Signing.PrivateKey(rawRepresentation: serialized))
            case .rs256, .rs384, .rs512, .ps256:
                backing = .rsa(try _RSA.Signing.PrivateKey(derRepresentation: serialized))
            }
        } catch {
            throw JOSEError(.invalidKey, "serialized \(algorithm.rawValue) private key could not be read")
        }
        self.init(algorithm: algorithm, backing: backing)
    }

    /// Accepts a PEM private key ("PRIVATE KEY", "EC PRIVATE KEY" or "RSA PRIVATE KEY").
    public init(algorithm: JWSAlgorithm, pem: String) throws(JOSEError) {
        let backing: Backing
        do {
            switch algorithm {
            case .es256: backing = .p256(try P256.Signing.PrivateKey(pemRepresentation: pem))
            case .es384: backing = .p384(try P384.Signing.PrivateKey(pemRepresentation: pem))
            case .es512: backing = .p521(try P521.Signing.PrivateKey(pemRepresentation: pem))
            case .edDSA: backing = .ed25519(try Curve25519.Signing.PrivateKey(pemRepresentation: pem))
            case .rs256, .rs384, .rs512, .ps256:
                backing = .rsa(try _RSA.Signing.PrivateKey(pemRepresentation: pem))
            }
        } catch {
            throw JOSEError(.invalidKey, "PEM \(algorithm.rawValue) private key could not be read")
        }
        self.init(algorithm: algorithm, backing: backing)
    }

    public var serialized: [UInt8] {
        switch backing {
        case .p256(let key): Array(key.derRepresentation)
        case .p384(let key): Array(key.derRepresentation)
        case .p521(let key): Array(key.derRepresentation)
        case .rsa(let key): Array(key.derRepresentation)
        case .ed25519(let key): Array(key.rawRepresentation)
        }
    }

    /// The public half as a JWK with `alg` set (no kid; callers assign one).
    public var publicJWK: JWK {
        switch backing {
        case .p256(let key):
            let raw = Array(key.publicKey.rawRepresentation)
            return JWK(material: .ec(curve: "P-256", x: Array(raw[..<32]), y: Array(raw[32...])),
                       verifier: .p256(key.publicKey), alg: algorithm)
        case .p384(let key):
            let raw = Array(key.publicKey.rawRepresentation)
            return JWK(material: .ec(curve: "P-384", x: Array(raw[..<48]), y: Array(raw[48...])),
                       verifier: .p384(key.publicKey), alg: algorithm)
        case .p521(let key):
            let raw = Array(key.publicKey.rawRepresentation)
            return JWK(material: .ec(curve: "P-521", x: Array(raw[..<66]), y: Array(raw[66...])),
                       verifier: .p521(key.publicKey), alg: algorithm)
        case .ed25519(let key):
            return JWK(material: .okp(curve: "Ed25519", x: Array(key.publicKey.rawRepresentation)),
                       verifier: .ed25519(key.publicKey), alg: algorithm)
        case .rsa(let key):
            let publicKey = key.publicKey
            // Primitives come from the key we just made, so extraction cannot meaningfully fail.
            let primitives = try! publicKey.getKeyPrimitives()
            let n = Array(primitives.modulus.drop(while: { $0 == 0 }))
            let e = Array(primitives.publicExponent.drop(while: { $0 == 0 }))
            return JWK(material: .rsa(n: n, e: e), verifier: .rsa(publicKey, byteCount: (key.keySizeInBits + 7) / 8),
                       alg: algorithm)
        }
    }

    /// Signs in JOSE format: raw r||s for ECDSA, the plain signature otherwise.
    public func sign(_ signingInput: [UInt8]) throws(JOSEError) -> [UInt8] {
        do {
            switch backing {
            case .p256(let key): return Array(try key.signature(for: SHA256.hash(data: signingInput)).rawRepresentation)
            case .p384(let key): return Array(try key.signature(for: SHA384.hash(data: signingInput)).rawRepresentation)
            case .p521(let key): return Array(try key.signature(for: SHA512.hash(data: signingInput)).rawRepresentation)
            case .ed25519(let key): return Array(try key.signature(for: signingInput))
            case .rsa(let key):
                let signature: _RSA.Signing.RSASignature
                switch algorithm {
                case .rs384: signature = try key.signature(for: SHA384.hash(data: signingInput), padding: .insecurePKCS1v1_5)
                case .rs512: signature = try key.signature(for: SHA512.hash(data: signingInput), padding: .insecurePKCS1v1_5)
                case .ps256: signature = try key.signature(for: SHA256.hash(data: signingInput), padding: .PSS)
                default: signature = try key.signature(for: SHA256.hash(data: signingInput), padding: .insecurePKCS1v1_5)
                }
                return Array(signature.rawRepresentation)
            }
        } catch {
            throw JOSEError(.invalidKey, "signing with \(algorithm.rawValue) failed")
        }
    }
}
