// Tests: host-token headers: algorithm, key and type come from the policy, never from the token.
import Foundation
import XCTest
@testable import KeywardJOSE

/// Header side (RFC 8725 §3.1 algorithm verification, §3.11 explicit typing; RFC 7515 §4.1.11 `crit`): the
/// algorithm, the key and the type come from policy, never from the token.
final class HostTokenHeaderTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_750_000_000)
    let claims = #"{"iss":"https://issuer.example","sub":"u1","iat":1750000000,"exp":1750000300}"#

    var rsaJWK: JWK {
        var key = TestKeys.rsa.publicJWK
        key.kid = "A"
        return key
    }

    func policy(keys: JWTVerificationPolicy.Keys? = nil, type: String? = nil, algorithms: Set<JWSAlgorithm> = [.rs256]) -> JWTVerificationPolicy {
        JWTVerificationPolicy(allowedAlgorithms: algorithms, keys: keys ?? .set(JWKSet(keys: [rsaJWK])), expectedType: type,
                              requiredClaims: ["iss", "sub", "exp"], issuer: "https://issuer.example")
    }

    func token(_ header: String, key: SigningKey = TestKeys.rsa) throws -> String {
        try signRaw(header: header, payload: claims, key: key)
    }

    func testValidTokenAccepted() throws {
        let verified = try JWTVerifier.verify(try token(#"{"alg":"RS256","kid":"A","typ":"JWT"}"#), policy: policy(type: "JWT"), now: now)
        XCTAssertEqual(verified.key.kid, "A")
    }

    /// A caller reads the unverified claims to choose the policy; the verifier checks those same claims, and a
    /// forged signature still fails after that read.
    func testParsedOnceTokenVerifiesTheClaimsItWasReadWith() throws {
        let compact = try token(#"{"alg":"RS256","kid":"A","typ":"JWT"}"#)
        let parsed = try UnverifiedJWT(compact)
        XCTAssertEqual(parsed.claims["iss"]?.stringValue, "https://issuer.example")
        let verified = try JWTVerifier.verify(parsed: parsed, policy: policy(type: "JWT"), now: now)
        XCTAssertEqual(verified.claims, parsed.claims)

        let other = try signRaw(header: #"{"alg":"RS256","kid":"A","typ":"JWT"}"#, payload: claims.replacingOccurrences(of: "u1", with: "u2"), key: TestKeys.rsa)
        let swapped = replacingPart(compact, index: 1, with: String(other.split(separator: ".")[1]))
        XCTAssertJOSEError(.badSignature, try JWTVerifier.verify(parsed: try UnverifiedJWT(swapped), policy: policy(type: "JWT"), now: now))
        XCTAssertThrowsError(try UnverifiedJWT(replacingPart(compact, index: 1, with: b64(#"{"sub":"u1","sub":"u2"}"#))))
        // Parsed under a larger limit than the policy's: still held to the policy's.
        let small = JWTVerificationPolicy(allowedAlgorithms: [.rs256], keys: .set(JWKSet(keys: [rsaJWK])), expectedType: "JWT",
                                          requiredClaims: ["iss", "sub", "exp"], issuer: "https://issuer.example", maxSize: compact.utf8.count - 1)
        XCTAssertJOSEError(.tooLarge, try JWTVerifier.verify(parsed: parsed, policy: small, now: now))
    }

    func testHeaderAlgNoneOrHS256WithValidRS256SignatureRejected() throws {
        let valid = try token(#"{"alg":"RS256","kid":"A"}"#)
        for header in [#"{"alg":"none","kid":"A"}"#, #"{"alg":"HS256","kid":"A"}"#] {
            let forged = replacingPart(valid, index: 0, with: b64(header))
            XCTAssertJOSEError(.algorithmNotAllowed, try JWTVerifier.verify(forged, policy: policy(), now: now), header)
        }
        let unsigned = b64(#"{"alg":"none","kid":"A"}"#) + "." + b64(claims) + "."
        XCTAssertJOSEError(.algorithmNotAllowed, try JWTVerifier.verify(unsigned, policy: policy(), now: now))
    }

    func testHS256KeyedWithThePublicKeyRejected() throws {
        let input = b64(#"{"alg":"HS256","kid":"A"}"#) + "." + b64(claims)
        guard case .rsa(let n, _) = rsaJWK.material else { return XCTFail() }
        let pem = StrictJSON.serialize(rsaJWK.jsonObject)
        for secret in [n, pem] {
            let forged = input + "." + b64(TestHMAC.hmacSHA256(key: secret, message: Array(input.utf8)))
            XCTAssertJOSEError(.algorithmNotAllowed, try JWTVerifier.verify(forged, policy: policy(), now: now))
        }
    }

    func testAlgorithmOutsideAllowListOrMismatchedWithKey() throws {
        XCTAssertJOSEError(.algorithmNotAllowed, try JWTVerifier.verify(try token(#"{"alg":"RS256","kid":"A"}"#), policy: policy(algorithms: [.ps256]), now: now))
        let ec = TestKeys.es256.publicJWK
        XCTAssertJOSEError(.algorithmKeyMismatch, try JWTVerifier.verify(try token(#"{"alg":"RS256"}"#), policy: policy(keys: .single(ec), algorithms: [.rs256, .es256]), now: now))
        // A key pinned to RS256 refuses a PS256 token even though PS256 is allowed and fits RSA.
        var pinned = rsaJWK
        pinned.alg = .rs256
        let ps = try token(#"{"alg":"PS256","kid":"A"}"#, key: TestKeys.key(for: .ps256))
        XCTAssertJOSEError(.algorithmKeyMismatch, try JWTVerifier.verify(ps, policy: policy(keys: .single(pinned), algorithms: [.rs256, .ps256]), now: now))
    }

    func testKidHandlingWithAKeySet() throws {
        XCTAssertJOSEError(.unknownKeyID, try JWTVerifier.verify(try token(#"{"alg":"RS256","kid":"UNKNOWN"}"#), policy: policy(), now: now))
        XCTAssertJOSEError(.missingKeyID, try JWTVerifier.verify(try token(#"{"alg":"RS256"}"#), policy: policy(), now: now))
        for kid in [#"../../etc/passwd"#, #"' OR 1=1--"#, #"A\u0000"#, String(repeating: "k", count: 10_000)] {
            XCTAssertJOSEError(.unknownKeyID, try JWTVerifier.verify(try token(#"{"alg":"RS256","kid":"\#(kid)"}"#), policy: policy(maxSizeLimit: 64 * 1024), now: now), kid)
        }
        XCTAssertJOSEError(.malformed, try JWTVerifier.verify(try token(#"{"alg":"RS256","kid":1}"#), policy: policy(), now: now))
        XCTAssertJOSEError(.duplicateMember, try JWTVerifier.verify(try token(#"{"alg":"RS256","kid":"B","kid":"A"}"#), policy: policy(), now: now))
    }

    func testKidWithASingleKey() throws {
        XCTAssertNoThrow(try JWTVerifier.verify(try token(#"{"alg":"RS256"}"#), policy: policy(keys: .single(rsaJWK)), now: now))
        XCTAssertJOSEError(.unknownKeyID, try JWTVerifier.verify(try token(#"{"alg":"RS256","kid":"B"}"#), policy: policy(keys: .single(rsaJWK)), now: now))
    }

    func testEmbeddedKeyReferencesIgnored() throws {
        let attacker = TestKeys.rsaOther
        let attackerJWK = String(decoding: StrictJSON.serialize(attacker.publicJWK.requiredMembers), as: UTF8.self)
        for header in [#"{"alg":"RS256","kid":"A","jwk":\#(attackerJWK)}"#,
                       #"{"alg":"RS256","kid":"A","jku":"https://attacker.example/jwks.json"}"#,
                       #"{"alg":"RS256","kid":"A","x5u":"https://attacker.example/cert.pem"}"#] {
            XCTAssertJOSEError(.badSignature, try JWTVerifier.verify(try token(header, key: attacker), policy: policy(), now: now), header)
        }
    }

    func testCritAndB64Rejected() throws {
        XCTAssertJOSEError(.unsupportedCritical, try JWTVerifier.verify(try token(#"{"alg":"RS256","kid":"A","crit":["x"],"x":1}"#), policy: policy(), now: now))
        XCTAssertJOSEError(.unsupportedB64, try JWTVerifier.verify(try token(#"{"alg":"RS256","kid":"A","b64":false}"#), policy: policy(), now: now))
    }

    func testExplicitTyping() throws {
        let dpop = try token(#"{"alg":"RS256","kid":"A","typ":"dpop+jwt"}"#)
        XCTAssertJOSEError(.typeMismatch, try JWTVerifier.verify(dpop, policy: policy(type: "JWT"), now: now))
        XCTAssertJOSEError(.typeMismatch, try JWTVerifier.verify(dpop, policy: policy(type: "at+jwt"), now: now))
        XCTAssertJOSEError(.typeMismatch, try JWTVerifier.verify(try token(#"{"alg":"RS256","kid":"A"}"#), policy: policy(type: "JWT"), now: now))
        // Media types are case-insensitive and "application/" is optional (RFC 7515 §4.1.9).
        XCTAssertNoThrow(try JWTVerifier.verify(try token(#"{"alg":"RS256","kid":"A","typ":"application/AT+JWT"}"#), policy: policy(type: "at+jwt"), now: now))
        XCTAssertNoThrow(try JWTVerifier.verify(try token(#"{"alg":"RS256","kid":"A","typ":"jwt"}"#), policy: policy(type: "JWT"), now: now))
    }

    func testDuplicateKeyIDsInSetPickTheKeyMadeForTheAlgorithm() throws {
        var ec = TestKeys.es256.publicJWK
        ec.kid = "A"
        let both = JWTVerificationPolicy.Keys.set(JWKSet(keys: [ec, rsaJWK]))
        XCTAssertNoThrow(try JWTVerifier.verify(try token(#"{"alg":"RS256","kid":"A"}"#), policy: policy(keys: both, algorithms: [.rs256, .es256]), now: now))
    }

    func testSignatureByAnotherKeyRejected() throws {
        XCTAssertJOSEError(.badSignature, try JWTVerifier.verify(try token(#"{"alg":"RS256","kid":"A"}"#, key: TestKeys.rsaOther), policy: policy(), now: now))
    }
}

extension HostTokenHeaderTests {
    func policy(maxSizeLimit: Int) -> JWTVerificationPolicy {
        var result = policy()
        result.maxSize = maxSizeLimit
        return result
    }
}
