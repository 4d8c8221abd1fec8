// Tests: the QR encoder against ISO/IEC 18004's published sizes, patterns, format, Reed–Solomon and capacities.
import XCTest

@testable import KeywardQR

/// Checks the encoder against published facts of ISO/IEC 18004: sizes, function patterns, format and version
/// information, Reed–Solomon output and capacities.
final class QRCodeStructureTests: XCTestCase {
    func testVersionOneIs21ModulesSquare() throws {
        let code = try QRCode(text: "HELLO")
        XCTAssertEqual(code.version, 1)
        XCTAssertEqual(code.size, 21)
        XCTAssertFalse(code.isDark(x: -1, y: 0), "outside the symbol is quiet zone")
        XCTAssertFalse(code.isDark(x: 0, y: 21))
    }

    func testSizeIs17PlusFourPerVersion() throws {
        for version in [1, 2, 7, 10, 20, 27, 40] {
            let bytes = [UInt8](repeating: 0x41, count: QRCode.byteCapacity(version: version))
            let code = try QRCode(bytes: bytes)
            XCTAssertEqual(code.version, version)
            XCTAssertEqual(code.size, 17 + 4 * version)
        }
    }

    func testThreeFinderPatternsWithLightSeparators() throws {
        let code = try QRCode(text: "finder patterns")
        let n = code.size
        for (left, top) in [(0, 0), (n - 7, 0), (0, n - 7)] {
            for dy in 0..<7 {
                for dx in 0..<7 {
                    let ring = max(abs(dx - 3), abs(dy - 3))
                    XCTAssertEqual(code.isDark(x: left + dx, y: top + dy), ring != 2, "finder at (\(left),\(top)) +(\(dx),\(dy))")
                }
            }
            // The separator is the light ring just inside the symbol around each finder.
            for i in -1...7 {
                for (x, y) in [(left + i, top - 1), (left + i, top + 7), (left - 1, top + i), (left + 7, top + i)]
                where (0..<n).contains(x) && (0..<n).contains(y) {
                    XCTAssertFalse(code.isDark(x: x, y: y), "separator (\(x),\(y))")
                }
            }
        }
        // No fourth finder: the bottom-right corner holds data, so a full 7×7 dark border there would be chance.
        let bottomRightBorderDark = (0..<7).allSatisfy { code.isDark(x: n - 7 + $0, y: n - 7) && code.isDark(x: n - 7, y: n - 7 + $0) }
        XCTAssertFalse(bottomRightBorderDark && code.isDark(x: n - 4, y: n - 4) && !code.isDark(x: n - 6, y: n - 6))
    }

    func testTimingPatternsAndDarkModule() throws {
        let code = try QRCode(text: String(repeating: "t", count: 300))
        for i in 8..<(code.size - 8) {
            XCTAssertEqual(code.isDark(x: i, y: 6), i % 2 == 0, "horizontal timing at \(i)")
            XCTAssertEqual(code.isDark(x: 6, y: i), i % 2 == 0, "vertical timing at \(i)")
        }
        XCTAssertTrue(code.isDark(x: 8, y: code.size - 8))
    }

    /// ISO/IEC 18004 table C.1, level M (indicator 00), masks 0–7.
    func testFormatInformationForLevelMMatchesPublishedTable() {
        let published: [Int] = [0x5412, 0x5125, 0x5E7C, 0x5B4B, 0x45F9, 0x40CE, 0x4F97, 0x4AA0]
        for mask in 0..<8 {
            XCTAssertEqual(QRFormat.formatBits(level: .medium, mask: mask), published[mask], "mask \(mask)")
        }
    }

    func testFormatInformationForOtherLevelsMatchesPublishedTable() {
        XCTAssertEqual(QRFormat.formatBits(level: .low, mask: 0), 0x77C4)
        XCTAssertEqual(QRFormat.formatBits(level: .low, mask: 7), 0x6976)
        XCTAssertEqual(QRFormat.formatBits(level: .quartile, mask: 0), 0x355F)
        XCTAssertEqual(QRFormat.formatBits(level: .high, mask: 0), 0x1689)
        XCTAssertEqual(QRFormat.formatBits(level: .high, mask: 7), 0x083B)
    }

    func testBothFormatCopiesInSymbolCarryLevelAndChosenMask() throws {
        for level in QRCode.ErrorCorrection.allCases {
            let code = try QRCode(text: "format \(level)", errorCorrection: level)
            let n = code.size
            func bit(_ dark: Bool, _ i: Int) -> Int { dark ? 1 << i : 0 }
            var first = 0, second = 0
            for i in 0...5 { first |= bit(code.isDark(x: 8, y: i), i) }
            first |= bit(code.isDark(x: 8, y: 7), 6)
            first |= bit(code.isDark(x: 8, y: 8), 7)
            first |= bit(code.isDark(x: 7, y: 8), 8)
            for i in 9...14 { first |= bit(code.isDark(x: 14 - i, y: 8), i) }
            for i in 0...7 { second |= bit(code.isDark(x: n - 1 - i, y: 8), i) }
            for i in 8...14 { second |= bit(code.isDark(x: 8, y: n - 15 + i), i) }
            let expected = QRFormat.formatBits(level: level, mask: code.mask)
            XCTAssertEqual(first, expected, "\(level)")
            XCTAssertEqual(second, expected, "\(level)")
        }
    }

    /// ISO/IEC 18004 table D.1.
    func testVersionInformationMatchesPublishedTable() {
        XCTAssertEqual(QRFormat.versionBits(version: 7), 0x07C94)
        XCTAssertEqual(QRFormat.versionBits(version: 8), 0x085BC)
        XCTAssertEqual(QRFormat.versionBits(version: 20), 0x149A6)
        XCTAssertEqual(QRFormat.versionBits(version: 40), 0x28C69)
    }

    func testVersionInformationIsDrawnTwiceFromVersionSeven() throws {
        let code = try QRCode(bytes: [UInt8](repeating: 0x61, count: QRCode.byteCapacity(version: 7)))
        XCTAssertEqual(code.version, 7)
        var topRight = 0, bottomLeft = 0
        for i in 0..<18 {
            let along = i / 3, across = code.size - 11 + i % 3
            if code.isDark(x: across, y: along) { topRight |= 1 << i }
            if code.isDark(x: along, y: across) { bottomLeft |= 1 << i }
        }
        XCTAssertEqual(topRight, 0x07C94)
        XCTAssertEqual(bottomLeft, 0x07C94)
    }

    /// The worked example of ISO/IEC 18004 annex I: "01234567" as 1-M data codewords and its 10 EC codewords.
    func testReedSolomonAnnexIExample() {
        let data: [UInt8] = [16, 32, 12, 86, 97, 128, 236, 17, 236, 17, 236, 17, 236, 17, 236, 17]
        XCTAssertEqual(ReedSolomonEncoder(degree: 10).remainder(of: data), [165, 36, 212, 193, 237, 54, 199, 135, 44, 85])
    }

    /// "HELLO WORLD" in alphanumeric mode at 1-M, the widely published example.
    func testReedSolomonHelloWorldVector() {
        let data: [UInt8] = [32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17]
        XCTAssertEqual(ReedSolomonEncoder(degree: 10).remainder(of: data), [196, 35, 39, 119, 235, 215, 231, 226, 93, 23])
    }

    func testReedSolomonGeneratorForDegreeSeven() {
        // g(x) = x^7 + α^87 x^6 + α^229 x^5 + α^146 x^4 + α^149 x^3 + α^238 x^2 + α^102 x + α^21 (annex A).
        let exponents = [87, 229, 146, 149, 238, 102, 21]
        XCTAssertEqual(ReedSolomonEncoder(degree: 7).generator, exponents.map { GF256.exp[$0] })
    }

    func testByteModeDataCodewords() {
        // Mode 0100, count 00000101, "HELLO", terminator, then the 0xEC/0x11 pads.
        let codewords = QRCodewords.dataCodewords(bytes: Array("HELLO".utf8), version: 1, level: .medium)
        XCTAssertEqual(codewords, [0x40, 0x54, 0x84, 0x54, 0xC4, 0xC4, 0xF0, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC])
    }

    /// ISO/IEC 18004 annex E.
    func testAlignmentPatternCentres() {
        let published: [Int: [Int]] = [
            1: [], 2: [6, 18], 6: [6, 34], 7: [6, 22, 38], 14: [6, 26, 46, 66], 16: [6, 26, 50, 74],
            21: [6, 28, 50, 72, 94], 28: [6, 26, 50, 74, 98, 122], 32: [6, 34, 60, 86, 112, 138],
            34: [6, 34, 62, 90, 118, 146], 35: [6, 30, 54, 78, 102, 126, 150], 36: [6, 24, 50, 76, 102, 128, 154], 40: [6, 30, 58, 86, 114, 142, 170],
        ]
        for (version, centres) in published {
            XCTAssertEqual(QRTables.alignmentPatternCentres(version: version), centres, "version \(version)")
        }
    }

    /// Total codewords per version (table 1).
    func testTotalCodewords() {
        let published: [Int: Int] = [1: 26, 2: 44, 6: 172, 7: 196, 10: 346, 14: 581, 20: 1085, 27: 1828, 32: 2465, 40: 3706]
        for (version, total) in published {
            XCTAssertEqual(QRTables.totalCodewords(version: version), total, "version \(version)")
        }
    }

    /// Byte-mode capacity for every version and level (table 7).
    func testByteCapacitiesMatchPublishedTable() {
        let published: [QRCode.ErrorCorrection: [Int]] = [
            .low: [
                17, 32, 53, 78, 106, 134, 154, 192, 230, 271, 321, 367, 425, 458, 520, 586, 644, 718, 792, 858,
                929, 1003, 1091, 1171, 1273, 1367, 1465, 1528, 1628, 1732, 1840, 1952, 2068, 2188, 2303, 2431, 2563, 2699, 2809, 2953,
            ],
            .medium: [
                14, 26, 42, 62, 84, 106, 122, 152, 180, 213, 251, 287, 331, 362, 412, 450, 504, 560, 624, 666,
                711, 779, 857, 911, 997, 1059, 1125, 1190, 1264, 1370, 1452, 1538, 1628, 1722, 1809, 1911, 1989, 2099, 2213, 2331,
            ],
            .quartile: [
                11, 20, 32, 46, 60, 74, 86, 108, 130, 151, 177, 203, 241, 258, 292, 322, 364, 394, 442, 482,
                509, 565, 611, 661, 715, 751, 805, 868, 908, 982, 1030, 1112, 1168, 1228, 1283, 1351, 1423, 1499, 1579, 1663,
            ],
            .high: [
                7, 14, 24, 34, 44, 58, 64, 84, 98, 119, 137, 155, 177, 194, 220, 250, 280, 310, 338, 382,
                403, 439, 461, 511, 535, 593, 625, 658, 698, 742, 790, 842, 898, 958, 983, 1051, 1093, 1139, 1219, 1273,
            ],
        ]
        for (level, capacities) in published {
            for version in 1...40 {
                XCTAssertEqual(QRCode.byteCapacity(version: version, errorCorrection: level), capacities[version - 1], "\(level) v\(version)")
            }
        }
        XCTAssertEqual(QRCode.byteCapacity(version: 1), 14)
        XCTAssertEqual(QRCode.byteCapacity(version: 10), 213)
        XCTAssertEqual(QRCode.byteCapacity(version: 40), 2331)
    }

    func testSmallestFittingVersionIsChosen() throws {
        for level in QRCode.ErrorCorrection.allCases {
            for version in 1..<40 {
                let capacity = QRCode.byteCapacity(version: version, errorCorrection: level)
                XCTAssertEqual(QRCode.smallestVersion(byteCount: capacity, errorCorrection: level), version, "\(level) v\(version) full")
                XCTAssertEqual(QRCode.smallestVersion(byteCount: capacity + 1, errorCorrection: level), version + 1, "\(level) v\(version) + 1")
            }
            XCTAssertNil(QRCode.smallestVersion(byteCount: QRCode.byteCapacity(version: 40, errorCorrection: level) + 1, errorCorrection: level))
        }
        XCTAssertEqual(QRCode.smallestVersion(byteCount: 0, errorCorrection: .medium), 1)
        XCTAssertEqual(try QRCode(bytes: []).version, 1)
        // The initialiser follows the same rule at a boundary.
        XCTAssertEqual(try QRCode(bytes: [UInt8](repeating: 0x30, count: 213)).version, 10)
        XCTAssertEqual(try QRCode(bytes: [UInt8](repeating: 0x30, count: 214)).version, 11)
    }

    func testTooLongInputThrows() {
        XCTAssertThrowsError(try QRCode(bytes: [UInt8](repeating: 0x41, count: 2332))) { error in
            XCTAssertEqual(error as? QRCodeError, .dataTooLong(bytes: 2332, maximum: 2331))
        }
        XCTAssertThrowsError(try QRCode(text: String(repeating: "é", count: 1200))) { error in
            XCTAssertEqual(error as? QRCodeError, .dataTooLong(bytes: 2400, maximum: 2331))
        }
        XCTAssertThrowsError(try QRCode(bytes: [UInt8](repeating: 0, count: 1274), errorCorrection: .high)) { error in
            XCTAssertEqual(error as? QRCodeError, .dataTooLong(bytes: 1274, maximum: 1273))
        }
        XCTAssertNoThrow(try QRCode(bytes: [UInt8](repeating: 0, count: 2953), errorCorrection: .low))
    }

    func testMaskPenaltyRules() {
        // N1: a run of 5 scores 3, each extra module 1 more; both colours count.
        XCTAssertEqual(QRPenalty.runPenalty([true, true, true, true, true, false]), 3)
        XCTAssertEqual(QRPenalty.runPenalty([Bool](repeating: false, count: 7) + [true]), 5)
        XCTAssertEqual(QRPenalty.runPenalty([true, false, true, true, true, true, false]), 0)
        // N3: 1:1:3:1:1 with four light modules on one side scores 40, on both sides 80.
        let core: [Bool] = [true, false, true, true, true, false, true]
        let light = [Bool](repeating: false, count: 4)
        XCTAssertEqual(QRPenalty.finderLikePenalty(light + core), 40)
        XCTAssertEqual(QRPenalty.finderLikePenalty(core + light), 40)
        XCTAssertEqual(QRPenalty.finderLikePenalty(light + core + light), 80)
        XCTAssertEqual(QRPenalty.finderLikePenalty([false, false, false] + core + [false, false, false]), 0)
    }

    func testChosenMaskHasTheLowestPenalty() throws {
        let bytes = Array("my-secure://enroll?token=abc.def.ghi".utf8)
        let code = try QRCode(bytes: bytes)
        let codewords = QRCodewords.build(bytes: bytes, version: code.version, level: .medium)
        var penalties: [Int] = []
        for mask in QRMask.all {
            var matrix = QRMatrix(version: code.version)
            matrix.placeCodewords(codewords)
            matrix.applyMask(mask)
            matrix.writeFormatBits(QRFormat.formatBits(level: .medium, mask: mask.pattern))
            penalties.append(QRPenalty.score(matrix))
            if mask.pattern == code.mask {
                for y in 0..<code.size {
                    for x in 0..<code.size { XCTAssertEqual(matrix[x, y], code.isDark(x: x, y: y)) }
                }
            }
        }
        XCTAssertEqual(penalties[code.mask], penalties.min())
    }

    func testSVGIsStandaloneAccessibleAndDrawsExactlyTheDarkModules() throws {
        let code = try QRCode(text: "svg")
        let svg = code.svg(moduleSize: 5, label: #"Scan "this" <now> & 'then'"#)
        let extent = code.size + 8
        XCTAssertTrue(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        XCTAssertTrue(svg.hasSuffix("</svg>"))
        XCTAssertTrue(svg.contains("width=\"\(extent * 5)\" height=\"\(extent * 5)\""))
        XCTAssertTrue(svg.contains("viewBox=\"0 0 \(extent) \(extent)\""))
        XCTAssertTrue(svg.contains("shape-rendering=\"crispEdges\""))
        XCTAssertTrue(svg.contains("role=\"img\""))
        XCTAssertTrue(svg.contains("aria-label=\"Scan &quot;this&quot; &lt;now&gt; &amp; &apos;then&apos;\""))
        XCTAssertEqual(svg.components(separatedBy: "<path").count - 1, 1)

        // Rebuild the module grid from the path's runs ("Mx yhNv1h-Nz") and compare with the symbol.
        let d = try XCTUnwrap(svg.components(separatedBy: " d=\"").last?.components(separatedBy: "\"").first)
        var drawn = Set<[Int]>()
        for run in d.split(separator: "z") {
            let parts = run.dropFirst().split(whereSeparator: { $0 == " " || $0 == "h" || $0 == "v" })
            let x = try XCTUnwrap(Int(parts[0])), y = try XCTUnwrap(Int(parts[1])), length = try XCTUnwrap(Int(parts[2]))
            for i in 0..<length { XCTAssertTrue(drawn.insert([x + i - 4, y - 4]).inserted) }
        }
        for y in -4..<(code.size + 4) {
            for x in -4..<(code.size + 4) {
                XCTAssertEqual(drawn.contains([x, y]), code.isDark(x: x, y: y), "module (\(x),\(y))")
            }
        }
    }
}
