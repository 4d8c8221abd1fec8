// Tests: DPoP proof claims: required claims, method, URL, time window, replay, ath, key binding and nonce.
import Foundation
import XCTest
@testable import KeywardJOSE

/// RFC 9449 §4.3 steps 3 and 8–12: required claims, method, URL, time window, replay, ath, key binding, nonce.
final class DPoPClaimTests: DPoPTestCase {
    private func proof(claims: String) throws -> String {
        try signRaw(header: #"{"typ":"dpop+jwt","alg":"ES256","jwk":\#(jwkJSON)}"#, payload: claims, key: key)
    }

    func testRequiredClaims() async throws {
        await reject(try proof(claims: #"{"htm":"POST","htu":"\#(url)","iat":1750000000}"#), "missing_claim")
        await reject(try proof(claims: #"{"jti":"a","htu":"\#(url)","iat":1750000000}"#), "missing_claim")
        await reject(try proof(claims: #"{"jti":"a","htm":"POST","iat":1750000000}"#), "missing_claim")
        await reject(try proof(claims: #"{"jti":"a","htm":"POST","htu":"\#(url)"}"#), "missing_claim")
    }

    func testJTIShape() async throws {
        await reject(try makeProof(jti: ""), "jti")
        await reject(try makeProof(extraClaims: ["jti": 12]), "jti")
        await reject(try makeProof(jti: String(repeating: "j", count: 257)), "jti")
        let (big, _) = makeVerifier(.init(maxProofSize: 20_000))
        await reject(try makeProof(jti: String(repeating: "j", count: 10_000)), "jti", verifier: big)
        await accept(try makeProof(jti: String(repeating: "j", count: 256)))
    }

    func testHTM() async throws {
        await reject(try makeProof(method: "post"), "htm_mismatch")
        await reject(try makeProof(method: "PUT"), "htm_mismatch")
        await reject(try makeProof(extraClaims: ["htm": ["POST"]]), "invalid_claim")
    }

    func testHTUMismatches() async throws {
        for other in ["http://api.example.com/v1/resource", "https://evil.example.com/v1/resource",
                      "https://api.example.com:8443/v1/resource", "https://api.example.com/v1/other",
                      "https://api.example.com/v1/resource/", "api.example.com/v1/resource"] {
            await reject(try makeProof(extraClaims: ["htu": .string(other)]), "htu_mismatch")
        }
    }

    func testHTUEquivalentFormsAccepted() async throws {
        // The proof may carry query/fragment, uppercase scheme/host and an explicit default port.
        for form in ["https://api.example.com/v1/resource?x=1#frag", "HTTPS://API.Example.COM/v1/resource",
                     "https://api.example.com:443/v1/resource"] {
            await accept(try makeProof(extraClaims: ["htu": .string(form)]))
        }
        // The request URL carrying a query the proof omits is fine as well.
        await accept(try makeProof(), url: url + "?page=2")
    }

    func testIssuedAtWindow() async throws {
        await reject(try makeProof(issuedAt: now.addingTimeInterval(-3600)), "iat_window")
        await reject(try makeProof(issuedAt: now.addingTimeInterval(3600)), "iat_window")
        await accept(try makeProof(issuedAt: now.addingTimeInterval(-10)))
        await accept(try makeProof(issuedAt: now.addingTimeInterval(10)))
        await reject(try makeProof(extraClaims: ["iat": "1750000000"]), "invalid_claim")
        await reject(try makeProof(extraClaims: ["iat": 1e300]), "iat_window")
        await reject(try makeProof(extraClaims: ["iat": -1]), "iat_window")
    }

    func testReplayRejected() async throws {
        let (verifier, _) = makeVerifier()
        let proof = try makeProof(jti: "once")
        await accept(proof, verifier: verifier)
        await reject(proof, "replayed", verifier: verifier)
        // A new signature over the same jti is a replay too.
        await reject(try makeProof(jti: "once"), "replayed", verifier: verifier)
        await accept(try makeProof(jti: "twice"), verifier: verifier)
    }

    func testReplayCacheFailureFailsClosed() async throws {
        struct Broken: DPoPReplayCache {
            struct Down: Error {}
            func recordOnce(jti: String, keyThumbprint: String, expiresAt: Date, now: Date) async throws -> Bool { throw Down() }
        }
        await reject(try makeProof(), "replay_check_failed", verifier: DPoPVerifier(replayCache: Broken()))
    }

    func testAccessTokenHash() async throws {
        let token = "access-token-value"
        await accept(try makeProof(accessToken: token), accessToken: token)
        await reject(try makeProof(), "ath_missing", accessToken: token)
        await reject(try makeProof(accessToken: "other"), "ath_mismatch", accessToken: token)
        let hex = TestHMAC.sha256(Array(token.utf8)).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        await reject(try makeProof(extraClaims: ["ath": .string(hex)]), "ath_mismatch", accessToken: token)
        await reject(try makeProof(accessToken: "DPoP " + token), "ath_mismatch", accessToken: token)
        // Our hash agrees with an independent SHA-256.
        XCTAssertEqual(DPoPProof.accessTokenHash(token), b64(TestHMAC.sha256(Array(token.utf8))))
    }

    func testKeyBinding() async throws {
        let thumbprint = key.publicJWK.thumbprint()
        await accept(try makeProof(), expectedThumbprint: thumbprint)
        await reject(try makeProof(key: TestKeys.es256Other), "jkt_mismatch", expectedThumbprint: thumbprint)
    }

    func testNonce() async throws {
        await accept(try makeProof(nonce: "n-1"), expectedNonce: "n-1")
        await reject(try makeProof(), "nonce", code: .useNonce, expectedNonce: "n-1")
        await reject(try makeProof(nonce: "n-0"), "nonce", code: .useNonce, expectedNonce: "n-1")
    }

    func testExtraClaimsAccepted() async throws {
        await accept(try makeProof(extraClaims: ["foo": "bar", "nbf": 1_750_000_000, "exp": 1_750_000_060]))
    }

    func testStoredVerificationKey() async throws {
        let stored = TestKeys.es256Other.publicJWK
        let withoutJWK = try signRaw(header: #"{"typ":"dpop+jwt","alg":"ES256"}"#, payload: standardClaims(), key: TestKeys.es256Other)
        let verified = await accept(withoutJWK, verificationKey: stored)
        XCTAssertEqual(verified?.thumbprint, stored.thumbprint())
        // Signed by the header key, not the stored one: the stored key decides.
        await reject(try makeProof(), "bad_signature", verificationKey: stored)
        var privateJWK = key.publicJWK.requiredMembers
        privateJWK["d"] = "AAAA"
        await reject(try makeProof(key: TestKeys.es256Other, extraHeader: ["jwk": .object(privateJWK)]), "jwk", verificationKey: stored)
    }

    func testProofsMadeByMakeCarryTheRightClaims() throws {
        let proof = try makeProof(url: "https://api.example.com/x?q=1#f", accessToken: "t", nonce: "n")
        let jws = try JWS.parse(proof)
        let claims = try jws.claims()
        XCTAssertEqual(claims.string("htu"), "https://api.example.com/x")
        XCTAssertEqual(claims.string("htm"), "POST")
        XCTAssertEqual(claims.int("iat"), 1_750_000_000)
        XCTAssertEqual(claims.string("nonce"), "n")
        XCTAssertEqual(claims.string("ath"), DPoPProof.accessTokenHash("t"))
        XCTAssertEqual(try Base64URL.decode(claims.string("jti")!).count, 16)
        XCTAssertEqual(jws.header.string("typ"), "dpop+jwt")
        XCTAssertNil(jws.header.object("jwk")?["d"])
    }
}
