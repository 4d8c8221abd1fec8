// Tests: a DPoP proof must be one small, well-formed compact JWS before anything else is read.
import XCTest
@testable import KeywardJOSE

/// RFC 9449 §4.3 step 2 and the size policy: a proof must be one small, well-formed compact JWS.
final class DPoPTransportTests: DPoPTestCase {
    func testValidProofAccepted() async throws {
        let verified = await accept(try makeProof())
        XCTAssertEqual(verified?.thumbprint, key.publicJWK.thumbprint())
    }

    func testTooLargeRejectedBeforeParsing() async throws {
        let padded = try makeProof(extraHeader: ["pad": .string(String(repeating: "x", count: 20_000))])
        await reject(padded, "too_large")
        await reject(String(repeating: "!", count: 9000), "too_large")
    }

    func testWrongPartCountRejected() async throws {
        let parts = try makeProof().split(separator: ".").map(String.init)
        await reject(parts[0] + "." + parts[1], "malformed")
        await reject(parts.joined(separator: ".") + ".AA.AA", "malformed")
        await reject("", "malformed")
    }

    func testPaddingAndForeignCharactersRejected() async throws {
        let proof = try makeProof()
        let parts = proof.split(separator: ".").map(String.init)
        let paddedHeader = parts[0] + "="
        await reject(replacingPart(proof, index: 0, with: paddedHeader), "malformed")
        await reject(replacingPart(proof, index: 2, with: parts[2] + "=="), "malformed")
        await reject(replacingPart(proof, index: 1, with: parts[1].replacingOccurrences(of: "-", with: "+") + "+/"), "malformed")
        await reject(replacingPart(proof, index: 2, with: "@" + parts[2].dropFirst()), "malformed")
    }

    func testNonJSONRejected() async throws {
        let header = try signRaw(header: "not json", payload: standardClaims(), key: key)
        await reject(header, "malformed")
        let claims = try signRaw(header: #"{"typ":"dpop+jwt","alg":"ES256","jwk":\#(jwkJSON)}"#, payload: "[1,2]", key: key)
        await reject(claims, "malformed")
        let notUTF8 = try JWS.sign(headerBytes: Array(#"{"typ":"dpop+jwt","alg":"ES256","jwk":\#(jwkJSON),"x":""#.utf8) + [0xFF, 0x22, 0x7D],
                                   payload: Array(standardClaims().utf8), key: key)
        await reject(notUTF8, "malformed")
    }

    func testDuplicateMembersRejected() async throws {
        let duplicateAlg = try signRaw(header: #"{"typ":"dpop+jwt","alg":"none","alg":"ES256","jwk":\#(jwkJSON)}"#,
                                       payload: standardClaims(), key: key)
        await reject(duplicateAlg, "duplicate_member")
        let duplicateTyp = try signRaw(header: #"{"typ":"JWT","typ":"dpop+jwt","alg":"ES256","jwk":\#(jwkJSON)}"#,
                                       payload: standardClaims(), key: key)
        await reject(duplicateTyp, "duplicate_member")
        let duplicateClaim = try signRaw(header: #"{"typ":"dpop+jwt","alg":"ES256","jwk":\#(jwkJSON)}"#,
                                         payload: #"{"jti":"a","htm":"GET","htm":"POST","htu":"\#(url)","iat":1750000000}"#, key: key)
        await reject(duplicateClaim, "duplicate_member")
    }
}
