// Fuzzes the application/x-www-form-urlencoded parser: no trap, no repeated name accepted, and what it reads
// survives being encoded again.
import FuzzSupport
import KeywardHTTPInput

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput(data, size)

    if let decoded = FormBody.decodeComponent(input.text) {
        expect(FormBody.decodeComponent(percentEncoded(decoded)) == decoded, "component does not survive encode → decode")
    }

    guard let form = try? FormBody.parse(input.bytes) else { return 0 }
    let pairs = form.keys.sorted().map { percentEncoded($0) + "=" + percentEncoded(form[$0]!) }
    let body = Array(pairs.joined(separator: "&").utf8)
    do {
        let reparsed = try FormBody.parse(body)
        expect(reparsed == form, "form does not survive encode → parse")
    } catch {
        expectationFailed("the encoded form is refused (\(error)): \(String(decoding: body, as: UTF8.self).debugDescription)")
    }
    return 0
}

let hexDigits = Array("0123456789ABCDEF".utf8)

/// Every byte but the unreserved ones as %XX: what a careful client sends.
func percentEncoded(_ text: String) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(text.utf8.count * 3)
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            out.append(byte)
        default:
            out.append(UInt8(ascii: "%"))
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0x0F)])
        }
    }
    return String(decoding: out, as: UTF8.self)
}
