// Fuzzes the DPoP htu normalization (RFC 9449 §4.3, RFC 3986 §6.2.2-6.2.3): no trap, the result is an absolute
// http(s) URL without query, fragment or user info, and normalizing is idempotent.
import FuzzSupport
import KeywardJOSE

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput(data, size)
    guard let normalized = HTU.normalize(input.text) else { return 0 }
    expect(normalized.hasPrefix("https://") || normalized.hasPrefix("http://"), "not an http(s) URL: \(normalized.debugDescription)")
    expect(!normalized.contains("?") && !normalized.contains("#"), "query or fragment kept: \(normalized.debugDescription)")
    let authority = normalized.split(separator: "/", omittingEmptySubsequences: false)[2]
    expect(!authority.isEmpty && !authority.contains("@"), "user info kept or host lost: \(normalized.debugDescription)")
    let again = HTU.normalize(normalized)
    expect(again == normalized, "not idempotent: \(normalized.debugDescription) → \(again.debugDescription)")
    return 0
}
