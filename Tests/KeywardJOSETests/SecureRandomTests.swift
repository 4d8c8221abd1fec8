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

    func testGeneratorCoversSmallRangesAcrossItsRefills() {
        var generator = SecureRandom.Generator()
        var counts = [Int](repeating: 0, count: 10)
        for _ in 0..<10_000 { counts[Int.random(in: 0...9, using: &generator)] += 1 }  // 313 buffer refills
        // Each digit expects 1,000; 800...1,200 is more than six standard deviations either way.
        for count in counts { XCTAssertTrue((800...1_200).contains(count), "\(counts)") }
    }
}
