// Test support: builds A256KW + A256GCM JWE tokens from chosen parts, and helpers to swap or flip their parts.
import Crypto
import Foundation
@testable import KeywardJOSE

/// Builds A256KW + A256GCM tokens with swift-crypto from parts the test chooses, to write what no peer would:
/// unusual headers, a chosen content key or IV, any header text byte for byte.
struct JWETestToken {
    var headerText = #"{"alg":"A256KW","enc":"A256GCM"}"#
    var plaintext: [UInt8] = Array("a Play Integrity token carries a JWS here".utf8)
    var keyEncryptionKey: [UInt8] = JWETestToken.key
    var contentKey: [UInt8] = Array(repeating: 0x5C, count: 32)
    var iv: [UInt8] = Array(0..<12)

    /// The key every test token is made with unless a test says otherwise.
    static let key: [UInt8] = Array(SHA256.hash(data: Array("keyward jwe test key".utf8)))

    /// The compact serialization (RFC 7516 §7.1) of the token, sealed as §5.1 says: AAD = the header's base64url text.
    var compact: String {
        let header = Base64URL.encode(Array(headerText.utf8))
        let wrapped = try! AES.KeyWrap.wrap(SymmetricKey(data: contentKey), using: SymmetricKey(data: keyEncryptionKey))
        let box = try! AES.GCM.seal(plaintext, using: SymmetricKey(data: contentKey), nonce: AES.GCM.Nonce(data: iv),
                                    authenticating: Array(header.utf8))
        return [header, Base64URL.encode(wrapped), Base64URL.encode(iv), Base64URL.encode(box.ciphertext), Base64URL.encode(box.tag)]
            .joined(separator: ".")
    }

    init() {}

    init(header: String) {
        headerText = header
    }
}

/// The parts of a compact serialization, and the same with one part replaced.
func jweParts(_ compact: String) -> [String] {
    compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
}

func replacingJWEPart(_ compact: String, _ index: Int, _ transform: (String) -> String) -> String {
    var parts = jweParts(compact)
    parts[index] = transform(parts[index])
    return parts.joined(separator: ".")
}

/// The base64url text of `part` with one bit of its decoded bytes flipped, so that it stays valid base64url.
func flippingDecodedBit(_ part: String, byte: Int = 0, bit: UInt8 = 0x01) -> String {
    var bytes = try! Base64URL.decode(part)
    bytes[byte % bytes.count] ^= bit
    return Base64URL.encode(bytes)
}
