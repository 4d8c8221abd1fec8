// Tests: DPoP proof headers: typ, alg and an embedded public JWK, with nothing fetched and no extensions.
import XCTest
@testable import KeywardJOSE

/// RFC 9449 §4.3 steps 3–7: typ, alg and an embedded public jwk, nothing fetched, no extensions.
final class DPoPHeaderTests: DPoPTestCase {
    private func proof(header: String) throws -> String {
        try signRaw(header: header, payload: standardClaims(), key: key)
    }

    func testTyp() async throws {
        await reject(try proof(header: #"{"alg":"ES256","jwk":\#(jwkJSON)}"#), "typ")
        await reject(try proof(header: #"{"typ":"JWT","alg":"ES256","jwk":\#(jwkJSON)}"#), "typ")
        await reject(try proof(header: #"{"typ":"dpop+jwt+x","alg":"ES256","jwk":\#(jwkJSON)}"#), "typ")
        await reject(try proof(header: #"{"typ":"application/dpop+jwt","alg":"ES256","jwk":\#(jwkJSON)}"#), "typ")
        await reject(try proof(header: #"{"typ":7,"alg":"ES256","jwk":\#(jwkJSON)}"#), "typ")
    }

    func testAlgMissingNoneAndNotAllowed() async throws {
        await reject(try proof(header: #"{"typ":"dpop+jwt","jwk":\#(jwkJSON)}"#), "alg")
        await reject(try proof(header: #"{"typ":"dpop+jwt","alg":null,"jwk":\#(jwkJSON)}"#), "alg")
        let noneHeader = b64(#"{"typ":"dpop+jwt","alg":"none","jwk":\#(jwkJSON)}"#)
        await reject(noneHeader + "." + b64(standardClaims()) + ".", "alg")
        let (restricted, _) = makeVerifier(.init(allowedAlgorithms: [.ps256, .edDSA]))
        await reject(try makeProof(), "alg", verifier: restricted)
    }

    func testHS256KeyedWithThePublicKeyRejected() async throws {
        let header = b64(#"{"typ":"dpop+jwt","alg":"HS256","jwk":\#(jwkJSON)}"#)
        let input = header + "." + b64(standardClaims())
        guard case .ec(_, let x, _) = key.publicJWK.material else { return XCTFail() }
        for secret in [Array(jwkJSON.utf8), x] {
            let mac = TestHMAC.hmacSHA256(key: secret, message: Array(input.utf8))
            await reject(input + "." + b64(mac), "alg")
        }
    }

    func testAlgMustMatchKey() async throws {
        await reject(try proof(header: #"{"typ":"dpop+jwt","alg":"RS256","jwk":\#(jwkJSON)}"#), "alg")
        await reject(try proof(header: #"{"typ":"dpop+jwt","alg":"ES384","jwk":\#(jwkJSON)}"#), "alg")
        var pinned = key.publicJWK.jsonObject
        pinned["alg"] = "ES384"
        await reject(try makeProof(extraHeader: ["jwk": .object(pinned)]), "jwk")
    }

    func testJWKProblems() async throws {
        await reject(try proof(header: #"{"typ":"dpop+jwt","alg":"ES256"}"#), "jwk")
        await reject(try proof(header: #"{"typ":"dpop+jwt","alg":"ES256","jwk":"x"}"#), "jwk")
        var privateJWK = key.publicJWK.requiredMembers
        privateJWK["d"] = "AAAA"
        await reject(try makeProof(extraHeader: ["jwk": .object(privateJWK)]), "jwk")
        await reject(try makeProof(extraHeader: ["jwk": ["kty": "oct", "k": "c2VjcmV0"]]), "jwk")
        var offCurve = key.publicJWK.requiredMembers
        var y = try Base64URL.decode(offCurve.string("y")!)
        y[31] ^= 1
        offCurve["y"] = .string(b64(y))
        await reject(try makeProof(extraHeader: ["jwk": .object(offCurve)]), "jwk")
        var wrongCurve = key.publicJWK.requiredMembers
        wrongCurve["crv"] = "P-384"
        await reject(try makeProof(extraHeader: ["jwk": .object(wrongCurve)]), "jwk")
    }

    func testWeakRSAJWKRejected() async throws {
        let rsaKey = TestKeys.key(for: .ps256)
        guard case .rsa(let n, let e) = rsaKey.publicJWK.material else { return XCTFail() }
        let small: JSONObject = ["kty": "RSA", "n": .string(b64(Array(n.prefix(128)))), "e": .string(b64(e))]
        await reject(try makeProof(key: rsaKey, extraHeader: ["jwk": .object(small)]), "jwk")
        let evenE: JSONObject = ["kty": "RSA", "n": .string(b64(n)), "e": .string(b64([1, 0, 0]))]
        await reject(try makeProof(key: rsaKey, extraHeader: ["jwk": .object(evenE)]), "jwk")
    }

    func testReferencesInsteadOfJWKAreNeverFollowed() async throws {
        for (member, value) in [("kid", "k1"), ("jku", "https://attacker.example/jwks"), ("x5u", "https://attacker.example/c.pem")] {
            await reject(try proof(header: #"{"typ":"dpop+jwt","alg":"ES256","\#(member)":"\#(value)"}"#), "jwk")
        }
        await reject(try proof(header: #"{"typ":"dpop+jwt","alg":"ES256","x5c":["MIIB"]}"#), "jwk")
    }

    func testCritAndB64Rejected() async throws {
        await reject(try makeProof(extraHeader: ["crit": ["exp"]]), "crit")
        await reject(try makeProof(extraHeader: ["b64": false]), "b64")
    }

    func testExtraHeaderMembersIgnored() async throws {
        await accept(try makeProof(extraHeader: ["tx_id": "1", "kid": "ignored", "jku": "https://attacker.example/"]))
    }
}
