// Fuzzes the Accept header reader: no trap, ranges are trimmed, lower-cased and weighted within 0...1, and
// HTML is preferred only when text/html is listed with a quality above zero. The same bytes go to the If-Match reader
// (the admin API's other header of a client's choosing): no trap, no tag with a quote or control byte in it, and a
// weak tag never matches.
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
    if case .tags(let tags)? = try? IfMatch.parse([header]) {
        expect(!tags.isEmpty, "an If-Match list with no tag accepted")
        for tag in tags {
            expect(!tag.opaque.utf8.contains { $0 == 0x22 || $0 < 0x21 || $0 == 0x7F }, "an entity tag holding a quote, space or control byte")
            expect(IfMatch.tags([tag]).matches(tag.opaque) == !tag.weak, "a weak tag matched, or a strong one did not match itself")
        }
    }
    return 0
}
