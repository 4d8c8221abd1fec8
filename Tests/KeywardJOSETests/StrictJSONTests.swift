// Tests: the strict JSON parser refuses anything other parsers could read differently; compact sorted output.
import XCTest
@testable import KeywardJOSE

/// The parser must agree with every other RFC 8259 parser on what a document means, or refuse it.
final class StrictJSONTests: XCTestCase {
    private func parse(_ text: String) throws -> JSONObject {
        try StrictJSON.parseObject(Array(text.utf8))
    }

    func testParsesAllValueKinds() throws {
        let object = try parse(#" { "a" : [1, -2.5, 3e2, true, false, null, "x\n\u00e9\ud83d\ude00"], "b": {"c": {}} , "d": [] } "#)
        XCTAssertEqual(object["a"], [1, -2.5, 300, true, false, nil, "x\né😀"])
        XCTAssertEqual(object["b"], ["c": [:]])
        XCTAssertEqual(object["d"], [])
    }

    func testDuplicateMembersRejectedAtEveryDepth() {
        XCTAssertJOSEError(.duplicateMember, try parse(#"{"alg":"none","alg":"ES256"}"#))
        XCTAssertJOSEError(.duplicateMember, try parse(#"{"a":{"b":1,"b":2}}"#))
        XCTAssertJOSEError(.duplicateMember, try parse(#"{"a":[{"b":1,"b":1}]}"#))
        // Escapes are resolved before comparing names.
        XCTAssertJOSEError(.duplicateMember, try parse(#"{"kid":"A","k\u0069d":"B"}"#))
    }

    func testDepthCap() throws {
        let ok = String(repeating: "[", count: 31) + String(repeating: "]", count: 31)
        XCTAssertNoThrow(try parse(#"{"a":\#(ok)}"#))
        let deep = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        XCTAssertJOSEError(.badJSON, try parse(#"{"a":\#(deep)}"#))
        let veryDeep = String(repeating: "[", count: 100_000)
        XCTAssertJOSEError(.badJSON, try parse(#"{"a":\#(veryDeep)"#))
    }

    func testLoneSurrogatesRejected() {
        XCTAssertJOSEError(.badJSON, try parse(#"{"a":"\ud800"}"#))
        XCTAssertJOSEError(.badJSON, try parse(#"{"a":"\udc00"}"#))
        XCTAssertJOSEError(.badJSON, try parse(#"{"a":"\ud800\u0041"}"#))
    }

    func testInvalidUTF8Rejected() {
        XCTAssertJOSEError(.badJSON, try StrictJSON.parseObject([0x7B, 0x22, 0xC0, 0xAF, 0x22, 0x3A, 0x31, 0x7D]))
        XCTAssertJOSEError(.badJSON, try StrictJSON.parseObject([0x7B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x3A, 0x31, 0x7D]))
    }

    func testSyntaxErrorsRejected() {
        let bad = [
            "", " ", "[]", "\"x\"", "{", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{'a':1}", "{a:1}",
            "{\"a\":1}x", "{\"a\":1}{}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":+1}", "{\"a\":1e}",
            "{\"a\":NaN}", "{\"a\":Infinity}", "{\"a\":1e400}", "{\"a\":tru}", "{\"a\":\"\u{01}\"}",
            "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":[1,]}", "{\"a\":1 /* c */}", "\u{FEFF}{}",
        ]
        for text in bad {
            XCTAssertJOSEError(.badJSON, try parse(text), text)
        }
    }

    func testSerializeIsCompactSortedAndPrintsIntegersPlainly() {
        let object: JSONObject = ["b": 1, "a": [1.5, 1e300, -0.0, 9_007_199_254_740_993.0], "c": "q\"\\\n\u{1}/é"]
        let text = String(decoding: StrictJSON.serialize(object), as: UTF8.self)
        XCTAssertEqual(text, #"{"a":[1.5,1e+300,0,9007199254740992.0],"b":1,"c":"q\"\\\n\u0001/é"}"#)
    }

    func testSerializeParsesBackToSameValue() throws {
        let object: JSONObject = ["x": ["y": [true, nil, "z", 42, -7.25]], "k": "\u{7F}\u{10FFFF}"]
        XCTAssertEqual(try StrictJSON.parseObject(StrictJSON.serialize(object)), object)
    }

    func testAccessors() throws {
        let object = try parse(#"{"s":"x","n":1.5,"i":1700000000,"o":{},"a":[],"b":true}"#)
        XCTAssertEqual(object.string("s"), "x")
        XCTAssertEqual(object.number("n"), 1.5)
        XCTAssertNil(object.int("n"))
        XCTAssertEqual(object.int("i"), 1_700_000_000)
        XCTAssertEqual(object.object("o"), [:])
        XCTAssertEqual(object.array("a"), [])
        XCTAssertEqual(object["b"]?.boolValue, true)
        XCTAssertNil(object.string("n"))
    }
}
