// Fuzzes the QR encoder with arbitrary bytes: no trap, the smallest version that holds them, the fixed patterns
// in place, and a label that cannot break out of the SVG attribute.
import FuzzSupport
import KeywardQR

/// Input: options byte (low two bits: the error correction level), then the payload.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (options, rest) = FuzzInput(data, size).optionsAndRest
    let level = QRCode.ErrorCorrection.allCases[Int(options & 3)]
    let payload = Array(rest)
    let code: QRCode
    do {
        code = try QRCode(bytes: payload, errorCorrection: level)
    } catch {
        expect(QRCode.smallestVersion(byteCount: payload.count, errorCorrection: level) == nil, "refused \(payload.count) bytes that fit")
        expect(error == .dataTooLong(bytes: payload.count, maximum: QRCode.byteCapacity(version: 40, errorCorrection: level)), "wrong error \(error)")
        return 0
    }
    expect(code.version == QRCode.smallestVersion(byteCount: payload.count, errorCorrection: level), "not the smallest version")
    expect(code.size == 17 + 4 * code.version, "size \(code.size) for version \(code.version)")
    expect((0..<8).contains(code.mask), "mask \(code.mask)")
    // Finder patterns (ISO/IEC 18004 §6.3.3) in three corners, timing patterns between them, the dark module.
    for (cornerX, cornerY) in [(0, 0), (code.size - 7, 0), (0, code.size - 7)] {
        for y in 0..<7 {
            for x in 0..<7 {
                let ring = max(abs(x - 3), abs(y - 3))
                expect(code.isDark(x: cornerX + x, y: cornerY + y) == (ring != 2), "finder pattern broken at \(cornerX + x),\(cornerY + y)")
            }
        }
    }
    for i in 8..<(code.size - 8) {
        expect(code.isDark(x: i, y: 6) == (i % 2 == 0) && code.isDark(x: 6, y: i) == (i % 2 == 0), "timing pattern broken at \(i)")
    }
    expect(code.isDark(x: 8, y: code.size - 8), "dark module missing")
    expect(!code.isDark(x: -1, y: 0) && !code.isDark(x: code.size, y: code.size), "quiet zone is dark")

    let label = String(decoding: payload.prefix(64), as: UTF8.self)
    let svg = Array(code.svg(moduleSize: Int(options >> 2), label: label).utf8)
    let marker = Array("aria-label=\"".utf8)
    guard let start = (0...(svg.count - marker.count)).first(where: { svg[$0..<($0 + marker.count)].elementsEqual(marker) }),
        let end = svg[(start + marker.count)...].firstIndex(of: UInt8(ascii: "\""))
    else {
        expectationFailed("no aria-label in the SVG")
    }
    expect(svg[end...].starts(with: "\">".utf8), "the label broke out of its attribute")
    expect(!svg[(start + marker.count)..<end].contains(UInt8(ascii: "<")), "raw '<' in the label")
    return 0
}
