// A check the key-reading targets share: what was read as a public key survives its own JWK form.
import FuzzSupport
import KeywardJOSE

/// A key's JSON gives the same key back, carries no private member, and the RFC 7638 thumbprint is stable.
public func expectKeyRoundTrip(_ key: JWK) {
    let json = key.jsonObject
    for member in ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] {
        expect(json[member] == nil, "a parsed key's JSON has the private member \(member)")
    }
    let again: JWK
    do {
        again = try JWK(json: json)
    } catch {
        expectationFailed("a parsed key's own JSON is refused: \(error)")
    }
    expect(again == key, "a parsed key's own JSON is another key")
    expect(again.thumbprint() == key.thumbprint(), "thumbprint changed on round trip")
}
