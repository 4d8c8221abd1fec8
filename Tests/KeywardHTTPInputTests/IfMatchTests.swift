// Tests: reading If-Match (RFC 9110 §13.1.1) — `*`, lists of strong and weak tags, and what is refused.
import KeywardHTTPInput
import XCTest

final class IfMatchTests: XCTestCase {
    func testAbsentStarAndLists() throws {
        XCTAssertNil(try IfMatch.parse([]))
        XCTAssertEqual(try IfMatch.parse(["*"]), .any)
        XCTAssertEqual(try IfMatch.parse([" * "]), .any)
        let listed = try XCTUnwrap(try IfMatch.parse(["\"3\", W/\"4\"", "\"x-7\""]))
        XCTAssertEqual(listed, .tags([
            IfMatch.EntityTag(weak: false, opaque: "3"), IfMatch.EntityTag(weak: true, opaque: "4"), IfMatch.EntityTag(weak: false, opaque: "x-7"),
        ]))
        XCTAssertTrue(listed.matches("3"))
        XCTAssertFalse(listed.matches("4"), "If-Match compares strongly: a weak tag never matches")
        XCTAssertTrue(listed.matches("x-7"))
        XCTAssertTrue(try XCTUnwrap(try IfMatch.parse(["\"\""])).matches(""), "an empty opaque tag is a tag")
        XCTAssertTrue(IfMatch.any.matches("anything"))
    }

    func testMalformedValuesAreRefused() {
        for value in ["3", "\"3", "W/3", "\"3\" \"4\"", "\"a\"b\"", "w/\"3\"", ",", "  ", "\"a b\"", "\"\u{1}\"", String(repeating: "\"a\",", count: 2000)] {
            XCTAssertThrowsError(try IfMatch.parse([value]), value.debugDescription)
        }
    }
}
