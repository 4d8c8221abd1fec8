// Tests: Accept-Language parsing as the push step reads it: preference order, refused ranges, language tags.
@testable import KeywardServer
import XCTest

/// Accept-Language (RFC 9110 §12.5.4) as the push step reads it to pick the notification text.
final class AcceptLanguageTests: XCTestCase {
    func testTagsComeMostPreferredFirstAndTiesKeepTheirOrder() {
        XCTAssertEqual(AcceptLanguage.preferences("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5"), ["fr-ch", "fr", "en", "de"])
        XCTAssertEqual(AcceptLanguage.preferences("en;q=0.5, de, pt-BR"), ["de", "pt-br", "en"])
        XCTAssertEqual(AcceptLanguage.preferences("da;q=0.8, en-GB;q=0.8, sv"), ["sv", "da", "en-gb"])
    }

    func testRefusedAndMalformedRangesAreLeftOut() {
        XCTAssertEqual(AcceptLanguage.preferences("de;q=0, en"), ["en"], "q=0 means not acceptable")
        XCTAssertEqual(AcceptLanguage.preferences("e, x-klingon, 12, de-, -de, de;q=2, nl;q=abc, it"), ["de", "nl", "it"], "a q outside 0...1 is ignored (quality 1); bad tags are dropped")
        XCTAssertEqual(AcceptLanguage.preferences("<script>, en"), ["en"])
        XCTAssertEqual(AcceptLanguage.preferences(nil), [])
        XCTAssertEqual(AcceptLanguage.preferences(""), [])
        XCTAssertEqual(AcceptLanguage.preferences(String(repeating: "en,", count: 400)), [], "an oversized header gives no preference")
        XCTAssertEqual(AcceptLanguage.preferences(Array(repeating: "en", count: 40).joined(separator: ",")), [], "so does a list of more than 32")
    }

    func testLanguageTags() {
        for tag in ["de", "pt-br", "zh-hant-tw", "gsw", "es-419"] { XCTAssertTrue(AcceptLanguage.isLanguageTag(tag), tag) }
        for tag in ["", "d", "DE", "de_AT", "de-", "de--at", "toolongprimary", "de-abcdefghi", "é", "de at"] {
            XCTAssertFalse(AcceptLanguage.isLanguageTag(tag), tag)
        }
    }
}
