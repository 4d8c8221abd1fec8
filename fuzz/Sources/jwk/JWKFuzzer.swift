// Fuzzes JWK and JWK Set parsing: no trap, a parsed key is public and round-trips through its JSON with the same
// thumbprint, and a key set keeps only signature keys.
import FuzzFixtures
import FuzzSupport
import KeywardJOSE

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput(data, size)

    if let set = try? JWKSet(json: input.bytes) {
        for key in set.keys {
            expect(key.use == nil || key.use == "sig", "key set kept a key with use \(key.use ?? "")")
            if let kid = key.kid { expect(set.key(withID: kid)?.kid == kid, "key(withID:) missed \(kid)") }
            expectKeyRoundTrip(key)
        }
        let reparsed = try? JWKSet(json: StrictJSON.serialize(set.jsonObject))
        expect(reparsed?.keys == set.keys, "key set does not survive its own JSON")
    }

    guard let object = try? StrictJSON.parseObject(input.bytes) else { return 0 }
    if let key = try? JWK(json: object) {
        expectKeyRoundTrip(key)
        expect((try? JWK(json: object, coordinates: .padShort)) == key, "a full-size key reads differently when short ones are padded")
    }
    if let padded = try? JWK(json: object, coordinates: .padShort) {
        // Padding makes the coordinates full size, so the key's own JSON is a strict full-size JWK.
        expectKeyRoundTrip(padded)
    }
    return 0
}
