// Tests: QR codes round-trip through zbar and librsvg, which share no code with the encoder.
import Foundation
import XCTest

@testable import KeywardQR

/// Round trips through decoders that share no code with the encoder: zbar (Debian zbar-tools) reads a PNG
/// rendered here, and librsvg (Debian librsvg2-bin) rasterises the SVG output for zbar to read.
final class QRCodeDecoderTests: XCTestCase {
    private static let base64url = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let printable = Array((0x20...0x7E).map(UInt8.init))

    private func randomBytes(_ count: Int, from alphabet: [UInt8], seed: UInt64) -> [UInt8] {
        var random = QRTestRandom(state: seed)
        return (0..<count).map { _ in alphabet.randomElement(using: &random)! }
    }

    private func assertRoundTrip(
        _ bytes: [UInt8], errorCorrection: QRCode.ErrorCorrection = .medium, expectedVersion: Int? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let code = try QRCode(bytes: bytes, errorCorrection: errorCorrection)
        if let expectedVersion {
            XCTAssertEqual(code.version, expectedVersion, "version", file: file, line: line)
        }
        let decoded = try QRExternalTool.zbarDecode(code)
        XCTAssertEqual(decoded, bytes, "v\(code.version) \(errorCorrection) mask \(code.mask), \(bytes.count) bytes", file: file, line: line)
    }

    func testShortASCII() throws {
        try assertRoundTrip(Array("Hello, Keyward!".utf8), expectedVersion: 2)
    }

    func testEnrollmentLinkWithLongToken() throws {
        let token = String(decoding: randomBytes(900, from: Self.base64url, seed: 1), as: UTF8.self)
        let link = "my-secure://enroll?token=" + token
        let code = try QRCode(text: link)
        XCTAssertEqual(try QRExternalTool.zbarDecode(code), Array(link.utf8))
        XCTAssertEqual(code.version, 25)
    }

    func testUTF8TextWithNonASCIICharacters() throws {
        let text = "Grüße aus Zürich — Anmeldung bestätigen ✓ 日本語のテキスト 🔐"
        let code = try QRCode(text: text)
        let decoded = try QRExternalTool.zbarDecode(code)
        XCTAssertEqual(String(decoding: decoded, as: UTF8.self), text)
    }

    func testBinaryBytesSurviveUnchanged() throws {
        var random = QRTestRandom(state: 7)
        try assertRoundTrip((0..<300).map { _ in UInt8.random(in: 0...255, using: &random) })
    }

    func testMaximumCapacityAtChosenVersions() throws {
        for version in [1, 2, 7, 10, 20, 27, 40] {
            let capacity = QRCode.byteCapacity(version: version)
            try assertRoundTrip(randomBytes(capacity, from: Self.printable, seed: UInt64(version)), expectedVersion: version)
        }
    }

    /// Every version at level M filled to capacity, so every block structure and alignment layout is read back.
    func testEveryVersionAtLevelMFilledToCapacity() throws {
        for version in 1...40 {
            let capacity = QRCode.byteCapacity(version: version)
            try assertRoundTrip(randomBytes(capacity, from: Self.base64url, seed: 100 + UInt64(version)), expectedVersion: version)
        }
    }

    func testEveryVersionAtLevelsLQHFilledToCapacity() throws {
        for level in [QRCode.ErrorCorrection.low, .quartile, .high] {
            for version in 1...40 {
                let capacity = QRCode.byteCapacity(version: version, errorCorrection: level)
                try assertRoundTrip(
                    randomBytes(capacity, from: Self.printable, seed: 1000 + UInt64(version)),
                    errorCorrection: level, expectedVersion: version
                )
            }
        }
    }

    /// Forces each of the eight masks by decoding symbols whose penalty picked them, so every mask formula is read.
    func testEveryMaskPatternDecodes() throws {
        var seen = Set<Int>()
        var seed: UInt64 = 5000
        while seen.count < 8 && seed < 5400 {
            let bytes = randomBytes(40, from: Self.printable, seed: seed)
            let code = try QRCode(bytes: bytes)
            if seen.insert(code.mask).inserted {
                XCTAssertEqual(try QRExternalTool.zbarDecode(code), bytes, "mask \(code.mask)")
            }
            seed += 1
        }
        XCTAssertEqual(seen, Set(0..<8))
    }

    func testSVGRenderedByLibrsvgDecodes() throws {
        let rsvg = try QRExternalTool.locate("rsvg-convert")
        let token = String(decoding: randomBytes(700, from: Self.base64url, seed: 2), as: UTF8.self)
        let link = "my-secure://enroll?token=" + token
        let code = try QRCode(text: link)
        let svgFile = QRExternalTool.temporaryFile("code.svg")
        let pngFile = QRExternalTool.temporaryFile("code-from-svg.png")
        defer {
            try? FileManager.default.removeItem(at: svgFile)
            try? FileManager.default.removeItem(at: pngFile)
        }
        try Data(code.svg(moduleSize: 4, label: "Enrollment code for \"Keyward\"").utf8).write(to: svgFile)
        let converted = try QRExternalTool.run(rsvg, ["--format=png", "--output", pngFile.path, svgFile.path])
        XCTAssertEqual(converted.status, 0, converted.stderr)
        XCTAssertEqual(try QRExternalTool.zbarDecode(pngFile: pngFile), Array(link.utf8))
    }
}
