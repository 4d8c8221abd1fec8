// Decrypting compact JWEs of the one algorithm pair Play Integrity tokens use, A256KW with A256GCM.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Crypto

/// A compact JWE (RFC 7516 §7.1) decrypted and authenticated, for exactly one algorithm pair: the content key
/// wrapped with AES-256 Key Wrap (`A256KW`, RFC 7518 §4.4) and the content sealed with AES-256-GCM (`A256GCM`,
/// RFC 7518 §5.3). That pair is what Google Play Integrity tokens use, and the only JWE Keyward has to read.
///
/// Nothing else is implemented on purpose: no other `alg` or `enc` (so no algorithm a sender could downgrade to),
/// no compression (`zip` would turn a 16 KiB token into an unbounded inflation), no extension (`crit`).
public struct JWE: Sendable {
    /// The protected header, authenticated by the AES-GCM tag.
    public let header: JSONObject
    public let plaintext: [UInt8]

    public static let defaultMaxSize = 16 * 1024

    /// RFC 7518 §4.4: the key-encryption key of `A256KW` is 256 bits.
    public static let keyEncryptionKeySize = 32
    /// A256GCM's content key (256 bits) wrapped: RFC 3394 adds one 64-bit block.
    static let encryptedKeySize = 40
    /// RFC 7518 §5.3: a 96-bit IV and a 128-bit tag.
    static let ivSize = 12
    static let tagSize = 16

    /// Decrypts a compact JWE with the `A256KW` key-encryption key.
    ///
    /// Checks run cheapest first and no cryptography runs on input that fails a structural check: the size (before
    /// anything is decoded), five parts, strict base64url, the protected header (strict JSON, `alg` `A256KW`, `enc`
    /// `A256GCM`, no `zip`, no `crit`), the sizes of the encrypted key, IV and tag; then the key unwrap, whose
    /// integrity check fails for a wrong key or an altered encrypted key, and AES-GCM, whose tag fails for any altered
    /// header text, IV, ciphertext or tag (the header's base64url text is the additional authenticated data,
    /// RFC 7516 §5.2 step 14, so even a re-encoding of the same header is refused).
    public static func decrypt(
        _ compact: some StringProtocol, keyEncryptionKey: [UInt8], maxSize: Int = JWE.defaultMaxSize
    ) throws(JOSEError) -> JWE {
        guard keyEncryptionKey.count == keyEncryptionKeySize else {
            throw JOSEError(.invalidKey, "an A256KW key-encryption key is \(keyEncryptionKeySize) bytes, not \(keyEncryptionKey.count)")
        }
        let utf8 = compact.utf8
        guard utf8.count <= maxSize else {
            throw JOSEError(.tooLarge, "JWE is \(utf8.count) bytes; the limit is \(maxSize)")
        }
        let parts = utf8.withContiguousStorageIfAvailable { parse(buffer: $0) }
            ?? Array(utf8).withUnsafeBufferPointer { parse(buffer: $0) }
        return try parts.get().open(with: keyEncryptionKey)
    }

    /// The five parts, decoded and checked for everything that needs no key.
    private struct Parts {
        let header: JSONObject
        /// The protected header's base64url text: the additional authenticated data.
        let headerText: [UInt8]
        let encryptedKey: [UInt8]
        let iv: [UInt8]
        let ciphertext: [UInt8]
        let tag: [UInt8]

        func open(with keyEncryptionKey: [UInt8]) throws(JOSEError) -> JWE {
            let contentKey: SymmetricKey
            do {
                contentKey = try AES.KeyWrap.unwrap(encryptedKey, using: SymmetricKey(data: keyEncryptionKey))
            } catch {
                throw JOSEError(.keyUnwrapFailed, "JWE encrypted key does not unwrap with this key (a wrong key, or an altered encrypted key)")
            }
            // A 40-byte input unwraps to 32 bytes or fails; checked anyway, since AES-GCM would take a shorter key.
            guard contentKey.bitCount == 256 else {
                throw JOSEError(.malformed, "JWE content key is \(contentKey.bitCount / 8) bytes; A256GCM needs 32")
            }
            do {
                let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: iv), ciphertext: ciphertext, tag: tag)
                let plaintext = try AES.GCM.open(box, using: contentKey, authenticating: headerText)
                return JWE(header: header, plaintext: Array(plaintext))
            } catch {
                throw JOSEError(.decryptionFailed, "JWE does not authenticate (an altered header, IV, ciphertext or tag)")
            }
        }
    }

    private static func parse(buffer: UnsafeBufferPointer<UInt8>) -> Result<Parts, JOSEError> {
        var dots: [Int] = []
        for index in buffer.indices where buffer[index] == UInt8(ascii: ".") {
            dots.append(index)
            if dots.count > 4 { break }
        }
        guard dots.count == 4 else {
            return .failure(JOSEError(.malformed, "compact JWE must have exactly 5 dot-separated parts"))
        }
        func part(_ index: Int) -> UnsafeBufferPointer<UInt8> {
            let start = index == 0 ? 0 : dots[index - 1] + 1
            let end = index == 4 ? buffer.count : dots[index]
            return UnsafeBufferPointer(rebasing: buffer[start..<end])
        }
        do throws(JOSEError) {
            let headerText = part(0)
            let header = try readHeader(try decode("protected header", headerText))
            let encryptedKey = try decode("encrypted key", part(1))
            guard encryptedKey.count == encryptedKeySize else {
                throw JOSEError(.malformed, "JWE encrypted key is \(encryptedKey.count) bytes; an A256KW-wrapped 256-bit key is \(encryptedKeySize)")
            }
            let iv = try decode("IV", part(2))
            guard iv.count == ivSize else {
                throw JOSEError(.malformed, "JWE IV is \(iv.count) bytes; A256GCM's is \(ivSize)")
            }
            let ciphertext = try decode("ciphertext", part(3))
            let tag = try decode("tag", part(4))
            guard tag.count == tagSize else {
                throw JOSEError(.malformed, "JWE tag is \(tag.count) bytes; A256GCM's is \(tagSize)")
            }
            return .success(Parts(
                header: header, headerText: Array(headerText), encryptedKey: encryptedKey, iv: iv, ciphertext: ciphertext, tag: tag
            ))
        } catch {
            return .failure(error)
        }
    }

    private static func decode(_ name: String, _ part: UnsafeBufferPointer<UInt8>) throws(JOSEError) -> [UInt8] {
        switch Base64URL.decode(buffer: part) {
        case .success(let bytes): return bytes
        case .failure(let error): throw JOSEError(error.code, "JWE \(name): \(error.message)")
        }
    }

    private static func readHeader(_ bytes: [UInt8]) throws(JOSEError) -> JSONObject {
        guard !bytes.isEmpty else { throw JOSEError(.malformed, "JWE protected header is empty") }
        let header: JSONObject
        do throws(JOSEError) {
            header = try StrictJSON.parseObject(bytes)
        } catch {
            throw JOSEError(error.code, "JWE protected header: \(error.message)")
        }
        if header["crit"] != nil {
            throw JOSEError(.unsupportedCritical, "JWE header has \"crit\"; no extensions are supported")
        }
        if header["zip"] != nil {
            throw JOSEError(.unsupportedCompression, "JWE header has \"zip\"; compressed plaintext is not supported")
        }
        guard let alg = header["alg"] else { throw JOSEError(.missingAlgorithm, "JWE header has no \"alg\"") }
        guard let algName = alg.stringValue else { throw JOSEError(.missingAlgorithm, "JWE header \"alg\" is not a string") }
        guard algName == "A256KW" else {
            throw JOSEError(.algorithmNotAllowed, "JWE alg \"\(displayable(algName))\" is not A256KW")
        }
        guard let enc = header["enc"] else { throw JOSEError(.missingEncryption, "JWE header has no \"enc\"") }
        guard let encName = enc.stringValue else { throw JOSEError(.missingEncryption, "JWE header \"enc\" is not a string") }
        guard encName == "A256GCM" else {
            throw JOSEError(.encryptionNotAllowed, "JWE enc \"\(displayable(encName))\" is not A256GCM")
        }
        return header
    }
}
