// Tests: one unusable entry in a provider's JWK Set is skipped without taking the usable keys down with it.
import XCTest
@testable import KeywardJOSE

/// One exotic entry in a provider's JWKS must not take the usable keys down with it.
final class JWKSetTests: XCTestCase {
    func testSkipsUnusableEntriesAndKeepsTheGoodKey() throws {
        var good = TestKeys.rsa.publicJWK
        good.kid = "good"
        let goodJSON = String(decoding: StrictJSON.serialize(good.jsonObject), as: UTF8.self)
        let document = """
        {"keys":[
          {"kty":"oct","k":"c2VjcmV0","kid":"sym"},
          {"kty":"RSA","alg":"RSA-OAEP-256","use":"enc","n":"AQAB","e":"AQAB","kid":"enc"},
          {"kty":"EC","crv":"secp256k1","alg":"ES256K","x":"AAAA","y":"AAAA","kid":"k1"},
          {"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA","d":"AAAA","kid":"priv"},
          "not an object",
          \(goodJSON)
        ]}
        """
        let set = try JWKSet(json: Array(document.utf8))
        XCTAssertEqual(set.keys.count, 1)
        XCTAssertEqual(set.key(withID: "good"), good)
        XCTAssertNil(set.key(withID: "sym"))
    }

    func testSkipsWeakRSAAndEncryptionKeys() throws {
        guard case .rsa(let n, let e) = TestKeys.rsa.publicJWK.material else { return XCTFail() }
        let weak: JSONObject = ["kty": "RSA", "n": .string(Base64URL.encode(n.prefix(128))), "e": .string(Base64URL.encode(e)), "kid": "weak"]
        var enc = TestKeys.es256.publicJWK.jsonObject
        enc["use"] = "enc"
        enc["kid"] = "enc"
        let set = try JWKSet(json: StrictJSON.serialize(["keys": [.object(weak), .object(enc)]]))
        XCTAssertTrue(set.keys.isEmpty)
    }

    func testDocumentMustBeValid() {
        XCTAssertJOSEError(.malformed, try JWKSet(json: Array(#"{"keyz":[]}"#.utf8)))
        XCTAssertJOSEError(.malformed, try JWKSet(json: Array(#"{"keys":{}}"#.utf8)))
        XCTAssertJOSEError(.badJSON, try JWKSet(json: Array(#"{"keys":[]"#.utf8)))
        XCTAssertJOSEError(.duplicateMember, try JWKSet(json: Array(#"{"keys":[],"keys":[]}"#.utf8)))
    }

    func testRoundTrip() throws {
        let keys = JWSAlgorithm.allCases.map { algorithm -> JWK in
            var key = TestKeys.key(for: algorithm).publicJWK
            key.kid = algorithm.rawValue
            return key
        }
        let set = JWKSet(keys: keys)
        let reparsed = try JWKSet(json: StrictJSON.serialize(set.jsonObject))
        XCTAssertEqual(reparsed.keys, keys)
        XCTAssertEqual(reparsed.key(withID: "PS256")?.alg, .ps256)
    }
}
