// Tests: compact JWE decryption, A256KW + A256GCM only, one test per rule: keys, tampering, headers, structure.
import Foundation
import XCTest
@testable import KeywardJOSE

/// Compact JWE decryption, A256KW + A256GCM only: one test per rule, on tokens sealed with swift-crypto in the test
/// (the independent peer is in JWECrossCheckTests).
final class JWETests: XCTestCase {
    private func decrypt(_ compact: String, key: [UInt8] = JWETestToken.key) throws -> JWE {
        try JWE.decrypt(compact, keyEncryptionKey: key)
    }

    func testDecryptsAndReturnsThePlaintextAndTheHeader() throws {
        var token = JWETestToken(header: #"{"alg":"A256KW","enc":"A256GCM","kid":"play-1","cty":"JWT"}"#)
        token.plaintext = Array("eyJhbGciOiJFUzI1NiJ9.e30.sig".utf8)
        let jwe = try decrypt(token.compact)
        XCTAssertEqual(jwe.plaintext, token.plaintext)
        XCTAssertEqual(jwe.header["kid"], "play-1")
        XCTAssertEqual(jwe.header["cty"], "JWT")
    }

    func testDecryptsEmptyAndBlockBoundaryPlaintexts() throws {
        for size in [0, 1, 15, 16, 17, 4096] {
            var token = JWETestToken()
            token.plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            XCTAssertEqual(try decrypt(token.compact).plaintext, token.plaintext, "\(size) bytes")
        }
    }

    // MARK: Keys

    func testWrongKeyFailsTheUnwrap() {
        var other = JWETestToken.key
        other[31] ^= 1
        XCTAssertJOSEError(.keyUnwrapFailed, try decrypt(JWETestToken().compact, key: other))
    }

    func testKeyEncryptionKeyMustBe32Bytes() {
        for size in [0, 16, 24, 31, 33, 64] {
            XCTAssertJOSEError(.invalidKey, try decrypt(JWETestToken().compact, key: Array(repeating: 7, count: size)), "\(size) bytes")
        }
    }

    // MARK: Tampering: every part is authenticated

    func testAlteredHeaderFailsAuthentication() throws {
        let original = JWETestToken(header: #"{"alg":"A256KW","enc":"A256GCM","kid":"a"}"#).compact
        // The same members with another kid, and the same JSON written with a space: both read fine, neither is the AAD.
        for header in [#"{"alg":"A256KW","enc":"A256GCM","kid":"b"}"#, #"{"alg":"A256KW", "enc":"A256GCM","kid":"a"}"#] {
            let altered = replacingJWEPart(original, 0) { _ in Base64URL.encode(Array(header.utf8)) }
            XCTAssertJOSEError(.decryptionFailed, try decrypt(altered), header)
        }
    }

    func testAlteredEncryptedKeyFailsTheUnwrap() {
        for byte in [0, 8, 39] {
            let altered = replacingJWEPart(JWETestToken().compact, 1) { flippingDecodedBit($0, byte: byte) }
            XCTAssertJOSEError(.keyUnwrapFailed, try decrypt(altered), "byte \(byte)")
        }
    }

    func testAlteredIVCiphertextOrTagFailsAuthentication() {
        for part in 2...4 {
            for byte in [0, 5, 11] {
                let altered = replacingJWEPart(JWETestToken().compact, part) { flippingDecodedBit($0, byte: byte, bit: 0x80) }
                XCTAssertJOSEError(.decryptionFailed, try decrypt(altered), "part \(part) byte \(byte)")
            }
        }
    }

    func testSwappedPartsFromAnotherTokenFail() throws {
        var other = JWETestToken()
        other.contentKey = Array(repeating: 0x11, count: 32)
        other.iv = Array(repeating: 9, count: 12)
        let mine = jweParts(JWETestToken().compact), theirs = jweParts(other.compact)
        for index in 1...4 {
            var mixed = mine
            mixed[index] = theirs[index]
            XCTAssertThrowsError(try decrypt(mixed.joined(separator: ".")), "part \(index) from another token") { error in
                XCTAssertTrue([.keyUnwrapFailed, .decryptionFailed].contains((error as? JOSEError)?.code), "\(error)")
            }
        }
    }

    /// Every bit of every character of a whole token flipped: never decrypts, always a JOSEError.
    func testNoSingleBitFlipOfTheTextDecrypts() {
        let compact = Array(JWETestToken().compact.utf8)
        var codes: [JOSEError.Code: Int] = [:]
        for index in compact.indices {
            for bit in 0..<7 {
                var altered = compact
                altered[index] ^= 1 << bit
                do {
                    _ = try decrypt(String(decoding: altered, as: UTF8.self))
                    XCTFail("decrypted with bit \(bit) of character \(index) flipped")
                } catch let error as JOSEError {
                    codes[error.code, default: 0] += 1
                } catch {
                    XCTFail("\(error)")
                }
            }
        }
        XCTAssertGreaterThan(codes[.decryptionFailed] ?? 0, 0)
        XCTAssertGreaterThan(codes[.keyUnwrapFailed] ?? 0, 0)
        XCTAssertGreaterThan(codes[.badBase64URL] ?? 0, 0)
    }

    // MARK: Header rules

    func testOnlyA256KWIsAccepted() {
        for alg in ["A128KW", "A192KW", "A256GCMKW", "dir", "RSA-OAEP-256", "ECDH-ES+A256KW", "a256kw", "A256KW ", "none"] {
            let token = JWETestToken(header: #"{"alg":"\#(alg)","enc":"A256GCM"}"#)
            XCTAssertJOSEError(.algorithmNotAllowed, try decrypt(token.compact), alg)
        }
        XCTAssertJOSEError(.missingAlgorithm, try decrypt(JWETestToken(header: #"{"enc":"A256GCM"}"#).compact))
        XCTAssertJOSEError(.missingAlgorithm, try decrypt(JWETestToken(header: #"{"alg":["A256KW"],"enc":"A256GCM"}"#).compact))
    }

    func testOnlyA256GCMIsAccepted() {
        for enc in ["A128GCM", "A192GCM", "A256CBC-HS512", "A128CBC-HS256", "a256gcm"] {
            let token = JWETestToken(header: #"{"alg":"A256KW","enc":"\#(enc)"}"#)
            XCTAssertJOSEError(.encryptionNotAllowed, try decrypt(token.compact), enc)
        }
        XCTAssertJOSEError(.missingEncryption, try decrypt(JWETestToken(header: #"{"alg":"A256KW"}"#).compact))
        XCTAssertJOSEError(.missingEncryption, try decrypt(JWETestToken(header: #"{"alg":"A256KW","enc":null}"#).compact))
    }

    func testCompressionIsRefused() {
        for zip in [#""DEF""#, #""none""#, "null", "false"] {
            let token = JWETestToken(header: #"{"alg":"A256KW","enc":"A256GCM","zip":\#(zip)}"#)
            XCTAssertJOSEError(.unsupportedCompression, try decrypt(token.compact), zip)
        }
    }

    func testCriticalExtensionsAreRefused() {
        for crit in [#"["exp"]"#, "[]", #""x""#] {
            let token = JWETestToken(header: #"{"alg":"A256KW","enc":"A256GCM","crit":\#(crit)}"#)
            XCTAssertJOSEError(.unsupportedCritical, try decrypt(token.compact), crit)
        }
    }

    func testHeaderMustBeOneStrictJSONObject() {
        XCTAssertJOSEError(.duplicateMember, try decrypt(JWETestToken(header: #"{"alg":"A256KW","enc":"A256GCM","enc":"A256GCM"}"#).compact))
        XCTAssertJOSEError(.duplicateMember, try decrypt(JWETestToken(header: #"{"alg":"dir","alg":"A256KW","enc":"A256GCM"}"#).compact))
        XCTAssertJOSEError(.badJSON, try decrypt(JWETestToken(header: #"["A256KW","A256GCM"]"#).compact))
        XCTAssertJOSEError(.badJSON, try decrypt(JWETestToken(header: #"{"alg":"A256KW","enc":"A256GCM"} x"#).compact))
        XCTAssertJOSEError(.malformed, try decrypt(JWETestToken(header: "").compact))
    }

    // MARK: Structure

    func testExactlyFiveParts() {
        let parts = jweParts(JWETestToken().compact)
        XCTAssertJOSEError(.malformed, try decrypt(parts.prefix(4).joined(separator: ".")), "4 parts")
        XCTAssertJOSEError(.malformed, try decrypt((parts + [""]).joined(separator: ".")), "6 parts, the last empty")
        XCTAssertJOSEError(.malformed, try decrypt((parts + [parts[3]]).joined(separator: ".")), "6 parts")
        XCTAssertJOSEError(.malformed, try decrypt(parts[0] + "." + parts[0]), "a JWS-like 2 dots")
        XCTAssertJOSEError(.malformed, try decrypt(""), "empty")
        XCTAssertJOSEError(.malformed, try decrypt(String(repeating: ".", count: 4000)), "dots only")
    }

    func testEveryPartIsStrictBase64URL() {
        for part in 0...4 {
            for spoil in ["=", "+", "/", " ", "%"] {
                let altered = replacingJWEPart(JWETestToken().compact, part) { String($0.dropLast()) + spoil }
                XCTAssertJOSEError(.badBase64URL, try decrypt(altered), "part \(part) ending in \(spoil)")
            }
            let padded = replacingJWEPart(JWETestToken().compact, part) { $0 + "==" }
            XCTAssertJOSEError(.badBase64URL, try decrypt(padded), "part \(part) padded")
        }
    }

    func testSizesOfEncryptedKeyIVAndTag() {
        var shortKey = JWETestToken()
        shortKey.contentKey = Array(repeating: 1, count: 16)
        XCTAssertJOSEError(.malformed, try decrypt(shortKey.compact), "a wrapped 128-bit content key")
        var longIV = JWETestToken()
        longIV.iv = Array(repeating: 1, count: 16)
        XCTAssertJOSEError(.malformed, try decrypt(longIV.compact), "a 16-byte IV")
        let shortTag = replacingJWEPart(JWETestToken().compact, 4) { Base64URL.encode(try! Base64URL.decode($0).prefix(12)) }
        XCTAssertJOSEError(.malformed, try decrypt(shortTag), "a 12-byte tag")
        let emptyKey = replacingJWEPart(JWETestToken().compact, 1) { _ in "" }
        XCTAssertJOSEError(.malformed, try decrypt(emptyKey), "no encrypted key (dir)")
    }

    func testSizeLimitComesBeforeAnyDecoding() {
        var token = JWETestToken()
        token.plaintext = Array(repeating: 0x41, count: 12 * 1024)
        let compact = token.compact
        XCTAssertGreaterThan(compact.utf8.count, JWE.defaultMaxSize)
        XCTAssertJOSEError(.tooLarge, try decrypt(compact))
        XCTAssertJOSEError(.tooLarge, try decrypt(String(repeating: "%", count: JWE.defaultMaxSize + 1)), "junk over the limit")
        XCTAssertEqual(try JWE.decrypt(compact, keyEncryptionKey: JWETestToken.key, maxSize: 32 * 1024).plaintext, token.plaintext)
        XCTAssertJOSEError(.tooLarge, try JWE.decrypt(JWETestToken().compact, keyEncryptionKey: JWETestToken.key, maxSize: 64))
    }
}
