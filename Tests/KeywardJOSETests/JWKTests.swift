// Tests: JWK parsing refuses private, symmetric, unknown, off-curve and weak keys; round trip and thumbprints.
import XCTest
@testable import KeywardJOSE

/// JWK parsing is a security boundary: a key we accept is a key we will verify with.
final class JWKTests: XCTestCase {
    private let p256 = #"{"kty":"EC","crv":"P-256","x":"l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs","y":"9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA"}"#

    private func json(_ text: String) throws -> JSONObject { try StrictJSON.parseObject(Array(text.utf8)) }

    private func with(_ base: String, _ changes: JSONObject) throws -> JSONObject {
        var object = try json(base)
        for (name, value) in changes { object[name] = value }
        return object
    }

    func testPrivateMembersRejected() throws {
        for member in ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] {
            XCTAssertJOSEError(.privateKeyMaterial, try JWK(json: with(p256, [member: "AQAB"])), member)
        }
    }

    func testSymmetricKeyRejected() {
        XCTAssertJOSEError(.unsupportedKey, try JWK(jsonString: #"{"kty":"oct","k":"c2VjcmV0"}"#))
    }

    func testUnknownTypesCurvesAndAlgorithmsRejected() throws {
        XCTAssertJOSEError(.unsupportedKey, try JWK(jsonString: #"{"kty":"XYZ"}"#))
        XCTAssertJOSEError(.unsupportedKey, try JWK(json: with(p256, ["crv": "secp256k1"])))
        XCTAssertJOSEError(.unsupportedKey, try JWK(jsonString: #"{"kty":"OKP","crv":"X25519","x":"AAAA"}"#))
        XCTAssertJOSEError(.unsupportedKey, try JWK(json: with(p256, ["alg": "RSA-OAEP-256"])))
        XCTAssertJOSEError(.unsupportedKey, try JWK(json: with(p256, ["alg": "HS256"])))
        XCTAssertJOSEError(.algorithmKeyMismatch, try JWK(json: with(p256, ["alg": "ES384"])))
    }

    func testECPointMustBeOnCurveAndExactLength() throws {
        // Flip the last byte of y: the point is no longer on P-256.
        var y = try Base64URL.decode("9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA")
        y[31] ^= 1
        XCTAssertJOSEError(.invalidKey, try JWK(json: with(p256, ["y": .string(Base64URL.encode(y))])))
        XCTAssertJOSEError(.invalidKey, try JWK(json: with(p256, ["y": .string(Base64URL.encode(y.dropFirst()))])))
        XCTAssertJOSEError(.invalidKey, try JWK(json: with(p256, ["x": .string(Base64URL.encode([0] + y))])))
        XCTAssertJOSEError(.invalidKey, try JWK(json: with(p256, ["x": "not base64!"])))
        XCTAssertJOSEError(.invalidKey, try JWK(json: with(p256, ["x": 5])))
    }

    func testWeakRSARejected() throws {
        let rsa = TestKeys.rsa.publicJWK
        guard case .rsa(let n, _) = rsa.material else { return XCTFail() }
        let small = Array(n.prefix(128))  // 1024-bit modulus
        XCTAssertJOSEError(.weakKey, try JWK(material: .rsa(n: small, e: [1, 0, 1])))
        XCTAssertJOSEError(.weakKey, try JWK(material: .rsa(n: n, e: [1, 0, 0])))
        XCTAssertJOSEError(.weakKey, try JWK(material: .rsa(n: n, e: [1])))
        XCTAssertJOSEError(.weakKey, try JWK(material: .rsa(n: n, e: [])))
    }

    func testJSONRoundTrip() throws {
        for algorithm in JWSAlgorithm.allCases {
            var key = TestKeys.key(for: algorithm).publicJWK
            key.kid = "kid-\(algorithm.rawValue)"
            key.use = "sig"
            let reparsed = try JWK(json: key.jsonObject)
            XCTAssertEqual(reparsed, key)
            XCTAssertEqual(reparsed.thumbprint(), key.thumbprint())
            let text = String(decoding: StrictJSON.serialize(key.jsonObject), as: UTF8.self)
            XCTAssertEqual(try JWK(jsonString: text), key)
        }
    }

    func testThumbprintIgnoresOptionalMembers() throws {
        let plain = try JWK(jsonString: p256)
        let decorated = try JWK(json: with(p256, ["kid": "x", "use": "sig", "alg": "ES256", "ext": true]))
        XCTAssertEqual(plain.thumbprint(), decorated.thumbprint())
    }

    func testCompatibility() throws {
        let ec = try JWK(jsonString: p256)
        XCTAssertTrue(ec.isCompatible(with: .es256))
        XCTAssertFalse(ec.isCompatible(with: .es384))
        XCTAssertFalse(ec.isCompatible(with: .rs256))
        let rsa = TestKeys.rsa.publicJWK
        for algorithm in [JWSAlgorithm.rs256, .rs384, .rs512, .ps256] { XCTAssertTrue(rsa.isCompatible(with: algorithm)) }
        XCTAssertFalse(rsa.isCompatible(with: .es256))
        XCTAssertTrue(TestKeys.edDSA.publicJWK.isCompatible(with: .edDSA))
        XCTAssertTrue(TestKeys.es512.publicJWK.isCompatible(with: .es512))
    }
}
