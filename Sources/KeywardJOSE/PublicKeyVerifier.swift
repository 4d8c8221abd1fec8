// The swift-crypto public key behind a JWK, built once, that verifies JWS signatures.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Crypto
import _CryptoExtras

/// The swift-crypto key behind a JWK, built once at parse time.
enum PublicKeyVerifier: Sendable {
    case p256(P256.Signing.PublicKey)
    case p384(P384.Signing.PublicKey)
    case p521(P521.Signing.PublicKey)
    case rsa(_RSA.Signing.PublicKey, byteCount: Int)
    case ed25519(Curve25519.Signing.PublicKey)

    init(material: JWK.Material) throws(JOSEError) {
        switch material {
        case .rsa(let n, let e):
            self = try Self.rsa(n: n, e: e)
        case .ec(let curve, let x, let y):
            self = try Self.ec(curve: curve, x: x, y: y)
        case .okp(let curve, let x):
            guard curve == "Ed25519" else { throw JOSEError(.unsupportedKey, "OKP curve \"\(displayable(curve))\" is not supported") }
            guard x.count == 32 else { throw JOSEError(.invalidKey, "Ed25519 \"x\" must be 32 bytes, got \(x.count)") }
            do {
                self = .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: x))
            } catch {
                throw JOSEError(.invalidKey, "Ed25519 public key rejected")
            }
        }
    }

    private static func rsa(n: [UInt8], e: [UInt8]) throws(JOSEError) -> PublicKeyVerifier {
        let modulus = n.drop(while: { $0 == 0 })
        let exponent = e.drop(while: { $0 == 0 })
        let bits = modulus.first.map { modulus.count * 8 - $0.leadingZeroBitCount } ?? 0
        guard bits >= JWK.minimumRSABits else {
            throw JOSEError(.weakKey, "RSA modulus has \(bits) bits; at least \(JWK.minimumRSABits) are required")
        }
        guard bits <= JWK.maximumRSABits else {
            throw JOSEError(.unsupportedKey, "RSA modulus has \(bits) bits; at most \(JWK.maximumRSABits) are supported")
        }
        guard let lastExponentByte = exponent.last, exponent.count > 1 || lastExponentByte > 1 else {
            throw JOSEError(.weakKey, "RSA exponent must be greater than 1")
        }
        guard lastExponentByte & 1 == 1 else { throw JOSEError(.weakKey, "RSA exponent must be odd") }
        guard modulus.last! & 1 == 1 else { throw JOSEError(.invalidKey, "RSA modulus must be odd") }
        do {
            let key = try _RSA.Signing.PublicKey(n: Array(modulus), e: Array(exponent))
            return .rsa(key, byteCount: (bits + 7) / 8)
        } catch {
            throw JOSEError(.invalidKey, "RSA public key rejected by the crypto backend")
        }
    }

    private static func ec(curve: String, x: [UInt8], y: [UInt8]) throws(JOSEError) -> PublicKeyVerifier {
        guard let size = JWK.coordinateSize(of: curve) else {
            throw JOSEError(.unsupportedKey, "EC curve \"\(displayable(curve))\" is not supported")
        }
        guard x.count == size, y.count == size else {
            throw JOSEError(.invalidKey, "\(curve) coordinates must be \(size) bytes each, got \(x.count) and \(y.count)")
        }
        let raw = x + y
        do {
            switch curve {
            case "P-256": return .p256(try P256.Signing.PublicKey(rawRepresentation: raw))
            case "P-384": return .p384(try P384.Signing.PublicKey(rawRepresentation: raw))
            default: return .p521(try P521.Signing.PublicKey(rawRepresentation: raw))
            }
        } catch {
            throw JOSEError(.invalidKey, "\(curve) point is not on the curve")
        }
    }

    func verify(signature: [UInt8], over input: [UInt8], algorithm: JWSAlgorithm) -> Bool {
        switch (self, algorithm) {
        case (.p256(let key), .es256):
            guard signature.count == 64,
                  let sig = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(sig, for: SHA256.hash(data: input))
        case (.p384(let key), .es384):
            guard signature.count == 96,
                  let sig = try? P384.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(sig, for: SHA384.hash(data: input))
        case (.p521(let key), .es512):
            guard signature.count == 132,
                  let sig = try? P521.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(sig, for: SHA512.hash(data: input))
        case (.ed25519(let key), .edDSA):
            guard signature.count == 64 else { return false }
            return key.isValidSignature(signature, for: input)
        case (.rsa(let key, let byteCount), _):
            guard signature.count == byteCount else { return false }
            let sig = _RSA.Signing.RSASignature(rawRepresentation: signature)
            switch algorithm {
            case .rs256: return key.isValidSignature(sig, for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
            case .rs384: return key.isValidSignature(sig, for: SHA384.hash(data: input), padding: .insecurePKCS1v1_5)
            case .rs512: return key.isValidSignature(sig, for: SHA512.hash(data: input), padding: .insecurePKCS1v1_5)
            case .ps256: return key.isValidSignature(sig, for: SHA256.hash(data: input), padding: .PSS)
            default: return false
            }
        default:
            return false
        }
    }
}
