// Fuzzes strict base64url: no trap, one text per byte string (decode → encode gives the input back), and
// encode → decode gives the bytes back.
import FuzzSupport
import KeywardJOSE

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput(data, size)
    let text = input.text
    if let bytes = try? Base64URL.decode(text) {
        let again = Base64URL.encode(bytes)
        expect(again == text, "decode then encode changed \(text.debugDescription) into \(again.debugDescription)")
        expect(bytes.count == text.utf8.count * 3 / 4, "decoded length \(bytes.count) for \(text.utf8.count) characters")
    }
    let encoded = Base64URL.encode(input.bytes)
    expect(!encoded.utf8.contains(UInt8(ascii: "=")), "encode wrote padding")
    expect((try? Base64URL.decode(encoded)) == Array(input.bytes), "encode then decode lost bytes")
    return 0
}
