// Tests: percent-encoding keeps only unreserved characters, as Foundation's encoding does.
import Foundation
@testable import KeywardServer
import XCTest

final class PercentEncodingTests: XCTestCase {
    func testOnlyUnreservedCharactersStayAsTheyAre() {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let samples = [
            "", "eyJhbGciOiJFUzI1NiJ9.eyJjaWQiOiJ4In0.c2lnbmF0dXJl", "a b+c/d?e=f&g#h%i", "ünïcödé ✓ 🙂", "~-._",
            "\u{0}\u{7F}\r\n", String((0...127).map { Character(Unicode.Scalar($0)!) }),
        ]
        for sample in samples {
            XCTAssertEqual(sample.percentEncodedUnreserved, sample.addingPercentEncoding(withAllowedCharacters: unreserved), sample)
        }
        XCTAssertEqual("a b".percentEncodedUnreserved, "a%20b")
        XCTAssertEqual("é".percentEncodedUnreserved, "%C3%A9")
    }
}
