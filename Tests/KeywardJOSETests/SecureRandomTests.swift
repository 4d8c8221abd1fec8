// Tests: secure random bytes, UUIDs (versions 4 and 7) and small-range numbers look random and well-formed.
import Foundation
import KeywardJOSE
import XCTest

final class SecureRandomTests: XCTestCase {
    func testBytesHaveTheRequestedLengthAndDiffer() {
        XCTAssertEqual(SecureRandom.bytes(0), [])
        XCTAssertEqual(SecureRandom.bytes(1).count, 1)
        XCTAssertEqual(SecureRandom.bytes(33).count, 33)
        let draws = Set((0..<1000).map { _ in SecureRandom.bytes(16) })
        XCTAssertEqual(draws.count, 1000)
        // Every bit position is set in some draw and clear in another (a stuck bit would show here).
        let words = (0..<64).map { _ in SecureRandom.bytes(32) }
        for index in 0..<32 {
            XCTAssertEqual(words.reduce(UInt8(0)) { $0 | $1[index] }, 0xFF)
            XCTAssertEqual(words.reduce(UInt8(0xFF)) { $0 & $1[index] }, 0x00)
        }
    }

    /// `getentropy` hands out at most 256 bytes per call: longer values are filled in pieces, each of them random.
    func testValuesLongerThanOneSystemCallAreRandomThroughout() {
        let long = SecureRandom.bytes(1000)
        XCTAssertEqual(long.count, 1000)
        let pieces = stride(from: 0, to: 1000, by: 256).map { Array(long[$0..<min($0 + 256, 1000)]) }
        XCTAssertEqual(Set(pieces).count, pieces.count, "no piece repeats another")
        // Each piece, the short tail too, is filled: 256 random bytes take about 162 distinct values (σ ≈ 5), and
        // zeros left in place would take one.
        for piece in pieces { XCTAssertGreaterThan(Set(piece).count, piece.count / 2, "piece of \(piece.count) bytes looks unfilled") }
    }

    func testUUIDsAreVersion4WithTheRFCVariant() throws {
        let pattern = try NSRegularExpression(pattern: "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
        var seen = Set<String>()
        for _ in 0..<1000 {
            let uuid = SecureRandom.uuidString()
            XCTAssertEqual(pattern.numberOfMatches(in: uuid, range: NSRange(uuid.startIndex..., in: uuid)), 1, uuid)
            XCTAssertEqual(UUID(uuidString: uuid)?.uuidString.lowercased(), uuid)
            seen.insert(uuid)
        }
        XCTAssertEqual(seen.count, 1000)
    }

    func testTimeOrderedUUIDsAreVersion7CarryTheirMillisecondAndSortByTime() throws {
        let pattern = try NSRegularExpression(pattern: "^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
        let time = Date(timeIntervalSince1970: 1_795_000_000.123_9)
        let uuid = SecureRandom.timeOrderedUUIDString(at: time)
        XCTAssertEqual(pattern.numberOfMatches(in: uuid, range: NSRange(uuid.startIndex..., in: uuid)), 1, uuid)
        XCTAssertEqual(UUID(uuidString: uuid)?.uuidString.lowercased(), uuid)
        // RFC 9562 §5.7: the first 48 bits are the Unix time in milliseconds, rounded down.
        let prefix = uuid.replacingOccurrences(of: "-", with: "").prefix(12)
        XCTAssertEqual(UInt64(prefix, radix: 16), 1_795_000_000_123)

        // Later ids sort later as text (what an index on them sees); ids of one millisecond still differ.
        let times = (0..<200).map { time.addingTimeInterval(Double($0) * 0.001) }
        let ids = times.map { SecureRandom.timeOrderedUUIDString(at: $0) }
        XCTAssertEqual(ids, ids.sorted())
        XCTAssertEqual(Set((0..<1000).map { _ in SecureRandom.timeOrderedUUIDString(at: time) }).count, 1000)
        XCTAssertTrue(SecureRandom.timeOrderedUUIDString(at: Date(timeIntervalSince1970: -5)).hasPrefix("00000000-0000-7"))
    }

    func testGeneratorCoversSmallRangesAcrossItsRefills() {
        var generator = SecureRandom.Generator()
        var counts = [Int](repeating: 0, count: 10)
        for _ in 0..<10_000 { counts[Int.random(in: 0...9, using: &generator)] += 1 }  // 313 buffer refills
        // Each digit expects 1,000; 800...1,200 is more than six standard deviations either way.
        for count in counts { XCTAssertTrue((800...1_200).contains(count), "\(counts)") }
    }
}
