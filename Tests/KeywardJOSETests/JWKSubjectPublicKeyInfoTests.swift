// Tests: a certificate's SubjectPublicKeyInfo reads as the same JWK as the key's JSON form; bad keys are refused.
import Crypto
import _CryptoExtras
import XCTest
@testable import KeywardJOSE

/// `JWK(subjectPublicKeyInfo:)`: a certificate's public key (RFC 5280 §4.1.2.7) as the same JWK the key's own
/// JSON form gives, for every key type Keyward verifies with; anything else refused with a reason.
final class JWKSubjectPublicKeyInfoTests: XCTestCase {
    func testEveryKeyTypeReadsAsItsOwnJWK() throws {
        for algorithm in [JWSAlgorithm.es256, .es384, .es512, .rs256, .edDSA] {
            let key = try SigningKey.generate(algorithm)
            let info: [UInt8] = switch key.backing {
            case .p256(let p): Array(p.publicKey.derRepresentation)
            case .p384(let p): Array(p.publicKey.derRepresentation)
            case .p521(let p): Array(p.publicKey.derRepresentation)
            case .rsa(let r): Array(r.publicKey.derRepresentation)
            case .ed25519(let e): [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00] + Array(e.publicKey.rawRepresentation)
            }
            let read = try JWK(subjectPublicKeyInfo: info, kid: "cert-1")
            XCTAssertEqual(read.thumbprint(), key.publicJWK.thumbprint(), "\(algorithm)")
            XCTAssertEqual(read.kid, "cert-1")
            let signature = try key.sign(Array("signed".utf8))
            XCTAssertTrue(read.verify(signature: signature, over: Array("signed".utf8), algorithm: algorithm), "\(algorithm)")
        }
    }

    func testMalformedAndWeakKeysAreRefused() throws {
        XCTAssertJOSEError(.unsupportedKey, try JWK(subjectPublicKeyInfo: []))
        XCTAssertJOSEError(.unsupportedKey, try JWK(subjectPublicKeyInfo: [0x30, 0x03, 0x02, 0x01, 0x00]))
        let p256 = Array(P256.Signing.PrivateKey().publicKey.derRepresentation)
        XCTAssertJOSEError(.unsupportedKey, try JWK(subjectPublicKeyInfo: Array(p256.dropLast())), "truncated")
        // An Ed25519 prefix with a 31-byte key is no key at all.
        XCTAssertJOSEError(.unsupportedKey, try JWK(subjectPublicKeyInfo: [0x30, 0x29, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x20, 0x00] + Array(repeating: 1, count: 31)))
        let weak = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
        XCTAssertJOSEError(.weakKey, try JWK(subjectPublicKeyInfo: Array(weak.publicKey.derRepresentation)))
    }
}
