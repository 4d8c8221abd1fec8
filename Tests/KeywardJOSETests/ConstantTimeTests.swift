// Tests: the constant-time comparison of secrets is equal only when the length and every byte match.
import KeywardJOSE
import XCTest

/// `ConstantTime.equal`, the one comparison of secrets (its timing is by construction: a loop over every byte).
final class ConstantTimeTests: XCTestCase {
    func testEqualOnlyWhenEveryByteAndTheLengthMatch() {
        XCTAssertTrue(ConstantTime.equal([UInt8](), [UInt8]()))
        XCTAssertTrue(ConstantTime.equal([1, 2, 3], [1, 2, 3] as [UInt8]))
        XCTAssertFalse(ConstantTime.equal([1, 2, 3], [1, 2, 4] as [UInt8]), "the last byte differs")
        XCTAssertFalse(ConstantTime.equal([0, 2, 3], [1, 2, 3] as [UInt8]), "the first byte differs")
        XCTAssertFalse(ConstantTime.equal([1, 2, 3], [1, 2] as [UInt8]), "a prefix is not equal")
        XCTAssertFalse(ConstantTime.equal([1, 2], [1, 2, 3] as [UInt8]))
        XCTAssertTrue(ConstantTime.equal(Array("nonce".utf8)[...], Array("nonce".utf8)), "slices compare by content")
        XCTAssertTrue(ConstantTime.equal("8f3a", "8f3a"))
        XCTAssertFalse(ConstantTime.equal("8f3a", "8f3b"))
        XCTAssertFalse(ConstantTime.equal("é", "e"), "compared as UTF-8 bytes")
    }
}
