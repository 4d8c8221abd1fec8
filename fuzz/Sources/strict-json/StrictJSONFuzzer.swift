// Fuzzes the strict JSON parser: no trap, and what it accepts survives serialize → parse unchanged.
import FuzzSupport
import KeywardJOSE

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput(data, size)
    guard let value = try? StrictJSON.parse(input.bytes) else {
        expect((try? StrictJSON.parseObject(input.bytes)) == nil, "parseObject accepted what parse refused")
        return 0
    }
    // Our own output must be valid strict JSON that means the same (a signer and a verifier agree on it), and
    // serializing is canonical: a second round gives the same bytes.
    let serialized = StrictJSON.serialize(value)
    let reparsed: JSONValue
    do {
        reparsed = try StrictJSON.parse(serialized)
    } catch {
        expectationFailed("serialized output does not parse (\(error)): \(String(decoding: serialized, as: UTF8.self).debugDescription)")
    }
    expect(reparsed == value, "serialize → parse changed the value: \(String(decoding: serialized, as: UTF8.self).debugDescription)")
    expect(StrictJSON.serialize(reparsed) == serialized, "serialization is not canonical")
    if case .object(let object) = value {
        expect((try? StrictJSON.parseObject(input.bytes)) == object, "parseObject disagrees with parse")
        expect(StrictJSON.serialize(object) == serialized, "serialize(object) disagrees with serialize(value)")
    } else {
        expect((try? StrictJSON.parseObject(input.bytes)) == nil, "parseObject accepted a non-object")
    }
    return 0
}
