// Tests: the CBOR reader's rules, one test each, on hand-written bytes: integers, strings, maps, limits, encoding.
import KeywardCBOR
import XCTest

/// The reader's rules, one test each, on hand-written bytes (RFC 8949 Appendix A examples where there is one).
final class CBORReaderTests: XCTestCase {
    private func decode(_ hex: String, maximumDepth: Int = CBORReader.defaultMaximumDepth) throws(CBORError) -> CBORValue {
        try CBORReader.decode(bytes(hex), maximumDepth: maximumDepth)
    }

    private func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0..<($0 + 2)]), radix: 16)! }
    }

    private func assertRefused(
        _ hex: String, _ kind: CBORError.Kind, at offset: Int, maximumDepth: Int = CBORReader.defaultMaximumDepth,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            let value = try decode(hex, maximumDepth: maximumDepth)
            XCTFail("\(hex) decoded to \(value), expected \(kind)", file: file, line: line)
        } catch {
            XCTAssertEqual(error, CBORError(kind, at: offset), hex, file: file, line: line)
        }
    }

    // MARK: Integers and their argument forms

    func testUnsignedIntegersInEveryArgumentForm() throws {
        XCTAssertEqual(try decode("00"), .unsigned(0))
        XCTAssertEqual(try decode("17"), .unsigned(23))
        XCTAssertEqual(try decode("1818"), .unsigned(24))
        XCTAssertEqual(try decode("18ff"), .unsigned(255))
        XCTAssertEqual(try decode("190100"), .unsigned(256))
        XCTAssertEqual(try decode("1a000f4240"), .unsigned(1_000_000))
        XCTAssertEqual(try decode("1b000000e8d4a51000"), .unsigned(1_000_000_000_000))
        XCTAssertEqual(try decode("1bffffffffffffffff"), .unsigned(UInt64.max))
    }

    func testNegativeIntegersKeepTheirFullRange() throws {
        XCTAssertEqual(try decode("20"), .integer(-1))
        XCTAssertEqual(try decode("26"), .integer(-7))
        XCTAssertEqual(try decode("3863"), .integer(-100))
        XCTAssertEqual(try decode("3903e7"), .integer(-1000))
        // -2^64: beyond Int64, still read exactly.
        let smallest = try decode("3bffffffffffffffff")
        XCTAssertEqual(smallest, .negative(UInt64.max))
        XCTAssertNil(smallest.integerValue)
        XCTAssertEqual(try decode("3b7fffffffffffffff").integerValue, Int64.min)
        XCTAssertNil(try decode("1b8000000000000000").integerValue)
        XCTAssertEqual(try decode("1b7fffffffffffffff").integerValue, Int64.max)
    }

    /// Longer heads than needed are accepted (the reader's documented choice) and read as the same value.
    func testNonMinimalArgumentsAreAcceptedAsTheSameValue() throws {
        XCTAssertEqual(try decode("1801"), .unsigned(1))
        XCTAssertEqual(try decode("1b0000000000000001"), .unsigned(1))
        XCTAssertEqual(try decode("590001 61"), .bytes([0x61]))
        XCTAssertEqual(try decode("7a00000001 61"), .text("a"))
        XCTAssertEqual(try decode("9800"), .array([]))
        XCTAssertEqual(try decode("b90001 01 02"), .map([CBORMapEntry(.unsigned(1), .unsigned(2))]))
    }

    // MARK: Strings

    func testByteAndTextStrings() throws {
        XCTAssertEqual(try decode("40"), .bytes([]))
        XCTAssertEqual(try decode("4401020304"), .bytes([1, 2, 3, 4]))
        XCTAssertEqual(try decode("60"), .text(""))
        XCTAssertEqual(try decode("6449455446"), .text("IETF"))
        XCTAssertEqual(try decode("62c3bc"), .text("\u{00fc}"))
        XCTAssertEqual(try decode("64f0908591"), .text("\u{10151}"))
    }

    func testTextMustBeValidUTF8() {
        assertRefused("62c328", .invalidUTF8, at: 0)
        assertRefused("61ff", .invalidUTF8, at: 0)
        // A surrogate encoded as UTF-8 (CESU-style) is not UTF-8.
        assertRefused("63eda080", .invalidUTF8, at: 0)
        // Overlong "/".
        assertRefused("62c0af", .invalidUTF8, at: 0)
        assertRefused("82 61 61 62 c328", .invalidUTF8, at: 3)
    }

    // MARK: Arrays and maps

    func testArraysAndMapsKeepTheirOrder() throws {
        XCTAssertEqual(try decode("83010203"), .array([.unsigned(1), .unsigned(2), .unsigned(3)]))
        XCTAssertEqual(try decode("8301820203820405"), .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])]))
        let map = try decode("a26161016162820203")
        XCTAssertEqual(map, .map([CBORMapEntry(.text("a"), .unsigned(1)), CBORMapEntry(.text("b"), .array([.unsigned(2), .unsigned(3)]))]))
        XCTAssertEqual(map["a"], .unsigned(1))
        XCTAssertEqual(map["b"]?.arrayValue?.count, 2)
        XCTAssertNil(map["c"])
        XCTAssertNil(map[1])
    }

    /// A COSE EC2 key (RFC 9053) as App Attest writes it: integer labels, negative ones included.
    func testMapLookupByIntegerKey() throws {
        let x = [UInt8](repeating: 0xAA, count: 32), y = [UInt8](repeating: 0xBB, count: 32)
        let cose = CBORValue.map([
            CBORMapEntry(.integer(1), .integer(2)), CBORMapEntry(.integer(3), .integer(-7)), CBORMapEntry(.integer(-1), .integer(1)),
            CBORMapEntry(.integer(-2), .bytes(x)), CBORMapEntry(.integer(-3), .bytes(y)),
        ])
        let decoded = try CBORReader.decode(cose.encoded)
        XCTAssertEqual(decoded, cose)
        XCTAssertEqual(decoded[1]?.integerValue, 2)
        XCTAssertEqual(decoded[3]?.integerValue, -7)
        XCTAssertEqual(decoded[-2]?.bytesValue, x)
        XCTAssertEqual(decoded[-3]?.bytesValue, y)
        XCTAssertNil(decoded[-4])
        XCTAssertNil(decoded["1"])
    }

    func testDuplicateMapKeysAreRefused() {
        assertRefused("a2 01 01 01 02", .duplicateMapKey, at: 3)
        assertRefused("a2 6161 01 6161 02", .duplicateMapKey, at: 4)
        assertRefused("a2 4101 01 4101 02", .duplicateMapKey, at: 4)
        // The same integer in a longer head is the same key.
        assertRefused("a2 01 01 1801 02", .duplicateMapKey, at: 3)
        assertRefused("81 a3 01 01 02 02 01 03", .duplicateMapKey, at: 6)
    }

    /// Keys are compared as CBOR compares them: different UTF-8 bytes are different keys even when Swift's String
    /// would call the texts equal, and an integer, a text and a byte string of "the same" content differ.
    func testKeysDifferByBytesAndByType() throws {
        let composed = try decode("a2 62c3a9 01 6365cc81 02")
        XCTAssertEqual(composed.mapEntries?.count, 2)
        XCTAssertEqual(composed["\u{00e9}"], .unsigned(1))
        XCTAssertEqual(composed["e\u{0301}"], .unsigned(2))
        XCTAssertEqual(try decode("a3 01 01 6131 02 4131 03").mapEntries?.count, 3)
        XCTAssertEqual(try decode("a2 01 01 20 02").mapEntries?.count, 2)
    }

    func testMapKeysMustBeIntegersOrStrings() {
        assertRefused("a1 80 01", .unsupportedMapKey, at: 1)
        assertRefused("a1 a0 01", .unsupportedMapKey, at: 1)
        assertRefused("a1 f5 01", .unsupportedMapKey, at: 1)
        assertRefused("a1 f6 01", .unsupportedMapKey, at: 1)
    }

    // MARK: Simple values, floats, tags, indefinite lengths

    func testFalseTrueAndNullAreTheOnlySimpleValues() throws {
        XCTAssertEqual(try decode("f4"), .bool(false))
        XCTAssertEqual(try decode("f5"), .bool(true))
        XCTAssertEqual(try decode("f6"), .null)
        XCTAssertTrue(try decode("f6").isNull)
        assertRefused("f7", .unsupportedSimpleValue, at: 0)
        assertRefused("f0", .unsupportedSimpleValue, at: 0)
        assertRefused("f818", .unsupportedSimpleValue, at: 0)
        assertRefused("f8ff", .unsupportedSimpleValue, at: 0)
    }

    func testFloatsAreRefused() {
        assertRefused("f93c00", .unsupportedSimpleValue, at: 0)
        assertRefused("fa47c35000", .unsupportedSimpleValue, at: 0)
        assertRefused("fb3ff199999999999a", .unsupportedSimpleValue, at: 0)
        assertRefused("82 01 f97e00", .unsupportedSimpleValue, at: 2)
    }

    /// Tags are refused, not skipped: none of the formats read here has one, and a skipped tag would make two
    /// different inputs read as one value.
    func testTagsAreRefused() {
        assertRefused("c074323031332d30332d32315432303a30343a30305a", .tag, at: 0)
        assertRefused("d82076687474703a2f2f7777772e6578616d706c652e636f6d", .tag, at: 0)
        assertRefused("a1 01 c1 01", .tag, at: 2)
    }

    func testIndefiniteLengthsAreRefused() {
        assertRefused("5f42010243030405ff", .indefiniteLength, at: 0)
        assertRefused("7f657374726561646d696e67ff", .indefiniteLength, at: 0)
        assertRefused("9fff", .indefiniteLength, at: 0)
        assertRefused("bf61610161629f0203ffff", .indefiniteLength, at: 0)
        assertRefused("82 01 9f ff", .indefiniteLength, at: 2)
        assertRefused("ff", .indefiniteLength, at: 0)
        assertRefused("1f", .indefiniteLength, at: 0)
        assertRefused("3f", .indefiniteLength, at: 0)
    }

    func testReservedAdditionalInformationIsRefused() {
        for initial in ["1c", "1d", "1e", "3c", "5d", "7e", "9c", "bd", "fc", "fd", "fe"] {
            assertRefused(initial, .reservedAdditionalInformation, at: 0)
        }
    }

    // MARK: Bounds

    func testLengthsBeyondTheInputAreRefusedBeforeAllocating() {
        // Four billion bytes announced in a 5-byte input.
        assertRefused("5affffffff", .lengthBeyondInput, at: 0)
        assertRefused("7bffffffffffffffff", .lengthBeyondInput, at: 0)
        assertRefused("9bffffffffffffffff", .lengthBeyondInput, at: 0)
        assertRefused("bbffffffffffffffff", .lengthBeyondInput, at: 0)
        assertRefused("46 0102030400", .lengthBeyondInput, at: 0)
        // Three items announced with two bytes left.
        assertRefused("83 01 02", .lengthBeyondInput, at: 0)
        // Two map entries need at least four bytes; three are left.
        assertRefused("a2 01 01 01", .lengthBeyondInput, at: 0)
        assertRefused("82 01 43 0102", .lengthBeyondInput, at: 2)
    }

    func testTruncatedInputIsRefused() {
        assertRefused("", .truncated, at: 0)
        assertRefused("18", .truncated, at: 0)
        assertRefused("1a0000", .truncated, at: 0)
        assertRefused("82 01 19 01", .truncated, at: 2)
        // Enough bytes for the count, not for the items: the second item is missing.
        assertRefused("82 19 0001", .truncated, at: 4)
        assertRefused("a1 19 0001", .truncated, at: 4)
    }

    func testNestingStopsAtTheDepthLimit() throws {
        let limit = CBORReader.defaultMaximumDepth
        let deepest = String(repeating: "81", count: limit - 1) + "80"
        XCTAssertNoThrow(try decode(deepest))
        assertRefused(String(repeating: "81", count: limit) + "80", .tooDeep, at: limit)
        assertRefused(String(repeating: "a1 01", count: limit) + "a0", .tooDeep, at: 2 * limit)
        // A deep key is refused for its depth before its kind.
        assertRefused("a1 81 80 01", .tooDeep, at: 2, maximumDepth: 2)
        XCTAssertNoThrow(try decode("8180", maximumDepth: 2))
        assertRefused("818180", .tooDeep, at: 2, maximumDepth: 2)
        XCTAssertEqual(try decode("01", maximumDepth: 0), .unsigned(1))
        assertRefused("80", .tooDeep, at: 0, maximumDepth: 0)
    }

    /// A million nested arrays: refused at the limit, without recursing into them.
    func testVeryDeepInputIsRefusedQuickly() {
        let input = [UInt8](repeating: 0x81, count: 1_000_000) + [0x80]
        XCTAssertThrowsError(try CBORReader.decode(input)) { error in
            XCTAssertEqual((error as? CBORError)?.kind, .tooDeep)
        }
    }

    func testAWholeInputIsExactlyOneItem() {
        assertRefused("01 02", .trailingBytes, at: 1)
        assertRefused("a0 00", .trailingBytes, at: 1)
        assertRefused("4101 ff", .trailingBytes, at: 2)
    }

    // MARK: Sequential reading

    /// authData packs a COSE key and, on newer devices, a map right after it: the reader hands them over one by
    /// one and says where each ended.
    func testSequentialReaderReadsItemsBackToBack() throws {
        let key = CBORValue.map([CBORMapEntry(.integer(1), .integer(2)), CBORMapEntry(.integer(3), .integer(-7))])
        let trailer = CBORValue.map([CBORMapEntry(.text("apple_bundle_version_01"), .text("1"))])
        var reader = CBORReader(key.encoded + trailer.encoded)
        XCTAssertEqual(try reader.read(), key)
        XCTAssertEqual(reader.offset, key.encoded.count)
        XCTAssertFalse(reader.isAtEnd)
        XCTAssertEqual(try reader.read(), trailer)
        XCTAssertTrue(reader.isAtEnd)
        XCTAssertEqual(reader.remainingCount, 0)
        XCTAssertThrowsError(try reader.read()) { error in
            XCTAssertEqual(error as? CBORError, CBORError(.truncated, at: key.encoded.count + trailer.encoded.count))
        }
    }

    func testSequentialReaderReportsOffsetsInItsWholeInput() {
        var reader = CBORReader(bytes("01 02 82 01 c1"))
        XCTAssertEqual(try reader.read(), .unsigned(1))
        XCTAssertEqual(try reader.read(), .unsigned(2))
        XCTAssertThrowsError(try reader.read()) { error in
            XCTAssertEqual(error as? CBORError, CBORError(.tag, at: 4))
        }
    }

    // MARK: Encoding

    func testEncodingUsesTheShortestHeads() {
        XCTAssertEqual(CBORValue.unsigned(23).encoded, bytes("17"))
        XCTAssertEqual(CBORValue.unsigned(24).encoded, bytes("1818"))
        XCTAssertEqual(CBORValue.unsigned(65_536).encoded, bytes("1a00010000"))
        XCTAssertEqual(CBORValue.unsigned(UInt64.max).encoded, bytes("1bffffffffffffffff"))
        XCTAssertEqual(CBORValue.integer(-500).encoded, bytes("3901f3"))
        XCTAssertEqual(CBORValue.text("\u{00fc}").encoded, bytes("62c3bc"))
        XCTAssertEqual(CBORValue.map([CBORMapEntry(.text("a"), .array([.bool(true), .null]))]).encoded, bytes("a1 6161 82 f5 f6"))
    }

    func testEncodedValuesDecodeToThemselves() throws {
        let value = CBORValue.array([
            .unsigned(0), .integer(-24), .integer(-25), .unsigned(4_294_967_296), .bytes(Array(repeating: 7, count: 300)),
            .text(String(repeating: "\u{1F600}", count: 70)), .map([CBORMapEntry(.bytes([1]), .array([])), CBORMapEntry(.integer(-1), .bool(false))]),
        ])
        XCTAssertEqual(try CBORReader.decode(value.encoded), value)
    }

    func testErrorsDescribeTheirKindAndOffset() {
        XCTAssertEqual(CBORError(.duplicateMapKey, at: 12).description, "CBOR duplicate_map_key at byte 12")
    }
}
