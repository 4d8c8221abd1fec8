// Tests: storage timestamps round to the nearest millisecond and convert back and forth without drifting.
import Foundation
import XCTest

@testable import KeywardServer

final class StorageTimeTests: XCTestCase {
    /// A date read back from storage must convert to the same milliseconds again, or every
    /// read-modify-write would drift it.
    func testRoundTripIsStable() {
        var milliseconds: Int64 = 1_750_000_000_000
        for _ in 0..<10_000 {
            milliseconds += 7
            let date = StorageTime.date(milliseconds: milliseconds)
            XCTAssertEqual(StorageTime.milliseconds(date), milliseconds)
        }
    }

    func testRoundsToTheNearestMillisecond() {
        XCTAssertEqual(StorageTime.milliseconds(Date(timeIntervalSince1970: 1.0004)), 1000)
        XCTAssertEqual(StorageTime.milliseconds(Date(timeIntervalSince1970: 1.0006)), 1001)
    }
}
