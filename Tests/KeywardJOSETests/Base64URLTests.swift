// Tests: strict base64url, where each byte string has exactly one accepted encoding.
import XCTest
@testable import KeywardJOSE

/// Strict base64url: one byte string has exactly one accepted encoding.
final class Base64URLTests: XCTestCase {
    func testRoundTripAllLengths() throws {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 250) }
            let text = Base64URL.encode(bytes)
            XCTAssertFalse(text.contains("="))
            XCTAssertEqual(try Base64URL.decode(text), bytes)
        }
    }

    func testKnownValues() throws {
        XCTAssertEqual(Base64URL.encode(Array("f".utf8)), "Zg")
        XCTAssertEqual(Base64URL.encode(Array("fo".utf8)), "Zm8")
        XCTAssertEqual(Base64URL.encode(Array("foo".utf8)), "Zm9v")
        XCTAssertEqual(Base64URL.encode([0xFB, 0xFF]), "-_8")
        XCTAssertEqual(try Base64URL.decode("-_8"), [0xFB, 0xFF])
    }

    func testPaddingRejected() {
        XCTAssertJOSEError(.badBase64URL, try Base64URL.decode("Zg=="))
        XCTAssertJOSEError(.badBase64URL, try Base64URL.decode("Zm8="))
    }

    func testForeignCharactersRejected() {
        for text in ["Zm9v+", "Zm/v", "Zm 9v", "Zm9v\n", "Zm9v.", "Zé9v"] {
            XCTAssertJOSEError(.badBase64URL, try Base64URL.decode(text), text)
        }
    }

    func testImpossibleLengthRejected() {
        XCTAssertJOSEError(.badBase64URL, try Base64URL.decode("Z"))
        XCTAssertJOSEError(.badBase64URL, try Base64URL.decode("Zm9vZ"))
    }

    func testNonCanonicalTrailingBitsRejected() {
        // "Zh" and "Zg" both decode to "f" in lax decoders; only "Zg" is canonical.
        XCTAssertJOSEError(.badBase64URL, try Base64URL.decode("Zh"))
        XCTAssertJOSEError(.badBase64URL, try Base64URL.decode("Zm9"))
    }

    func testSubstringInput() throws {
        let text = "xx.Zm9v.yy"
        let middle = text.split(separator: ".")[1]
        XCTAssertEqual(try Base64URL.decode(middle), Array("foo".utf8))
    }
}
