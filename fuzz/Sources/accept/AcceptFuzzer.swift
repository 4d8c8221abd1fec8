// Fuzzes the Accept header reader: no trap, ranges are trimmed, lower-cased and weighted within 0...1, and
// HTML is preferred only when text/html is listed with a quality above zero.
import FuzzSupport
import KeywardHTTPInput

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let header = FuzzInput(data, size).text
    let ranges = AcceptHeader.ranges(header)
    for range in ranges {
        expect((0...1).contains(range.quality), "quality \(range.quality) outside 0...1")
        expect(range.value == range.value.lowercased(), "range not lower-cased: \(range.value.debugDescription)")
        expect(range.value.first != " " && range.value.last != " " && range.value.first != "\t" && range.value.last != "\t",
               "range not trimmed: \(range.value.debugDescription)")
    }
    expect(AcceptHeader.ranges(header, maximumRanges: 4).count <= 4, "more ranges than the maximum")
    if AcceptHeader.prefersHTML(header) {
        expect(ranges.contains { $0.value == "text/html" && $0.quality > 0 }, "prefers HTML without text/html listed")
    }
    return 0
}
