// Tests: host-token claims: times are sane numbers, and issuer and audience match exactly.
import Foundation
import XCTest
@testable import KeywardJOSE

/// Claim side (RFC 7519 §4.1, RFC 8725 §3.8-3.9): times are numbers within reason, issuer and audience match exactly.
final class HostTokenClaimTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_750_000_000)
    let key = TestKeys.es256

    var policy: JWTVerificationPolicy {
        JWTVerificationPolicy(allowedAlgorithms: [.es256], keys: .single(key.publicJWK), requiredClaims: ["iss", "sub", "exp"],
                              issuer: "https://issuer.example", leeway: 30, maxLifetime: 3600)
    }

    private func token(_ changes: JSONObject, removing: [String] = []) throws -> String {
        var claims: JSONObject = ["iss": "https://issuer.example", "sub": "u1", "iat": 1_750_000_000, "exp": 1_750_000_300]
        for (name, value) in changes { claims[name] = value }
        for name in removing { claims[name] = nil }
        return try JWS.sign(header: ["typ": "JWT"], claims: claims, key: key)
    }

    private func verify(_ token: String, _ policy: JWTVerificationPolicy? = nil) throws -> VerifiedJWT {
        try JWTVerifier.verify(token, policy: policy ?? self.policy, now: now)
    }

    func testValid() throws {
        XCTAssertEqual(try verify(try token([:])).claims.string("sub"), "u1")
    }

    func testMissingRequiredClaims() throws {
        for name in ["iss", "sub", "exp"] {
            XCTAssertJOSEError(.missingClaim, try verify(try token([:], removing: [name])), name)
        }
        XCTAssertJOSEError(.missingClaim, try verify(try token([:], removing: ["iat"])))
        XCTAssertJOSEError(.missingClaim, try verify(try token(["sub": nil])))
    }

    func testIssuerMustMatchExactly() throws {
        XCTAssertJOSEError(.issuerMismatch, try verify(try token(["iss": "https://issuer.example/"])))
        XCTAssertJOSEError(.issuerMismatch, try verify(try token(["iss": "https://ISSUER.example"])))
        XCTAssertJOSEError(.invalidClaim, try verify(try token(["iss": ["https://issuer.example"]])))
    }

    func testExpiry() throws {
        XCTAssertJOSEError(.expired, try verify(try token(["exp": 1_749_999_960])))
        XCTAssertNoThrow(try verify(try token(["exp": 1_749_999_990])))
    }

    func testNotBeforeAndIssuedAtInTheFuture() throws {
        XCTAssertJOSEError(.notYetValid, try verify(try token(["nbf": 1_750_000_060])))
        XCTAssertNoThrow(try verify(try token(["nbf": 1_750_000_020])))
        XCTAssertJOSEError(.issuedInFuture, try verify(try token(["iat": 1_750_000_060])))
    }

    func testLifetime() throws {
        XCTAssertJOSEError(.lifetimeTooLong, try verify(try token(["exp": 1_750_007_200])))
        XCTAssertJOSEError(.lifetimeTooLong, try verify(try token(["nbf": 1_749_990_000, "exp": 1_750_000_300], removing: ["iat"])))
    }

    func testAbsurdTimes() throws {
        XCTAssertJOSEError(.invalidClaim, try verify(try token(["exp": 1e300])))
        XCTAssertJOSEError(.invalidClaim, try verify(try token(["exp": -1])))
        XCTAssertJOSEError(.invalidClaim, try verify(try token(["exp": "1750000300"])))
        XCTAssertJOSEError(.invalidClaim, try verify(try token(["iat": "now"])))
        XCTAssertJOSEError(.invalidClaim, try verify(try token(["nbf": true])))
        let overflow = try signRaw(header: #"{"alg":"ES256"}"#, payload: #"{"iss":"https://issuer.example","sub":"u","exp":1e400}"#, key: key)
        XCTAssertJOSEError(.badJSON, try verify(overflow))
    }

    func testAudience() throws {
        var policy = self.policy
        policy.audience = "api://keyward"
        XCTAssertNoThrow(try verify(try token(["aud": "api://keyward"]), policy))
        XCTAssertNoThrow(try verify(try token(["aud": ["other", "api://keyward"]]), policy))
        XCTAssertJOSEError(.audienceMismatch, try verify(try token(["aud": "api://other"]), policy))
        XCTAssertJOSEError(.audienceMismatch, try verify(try token(["aud": ["a", "b"]]), policy))
        XCTAssertJOSEError(.missingClaim, try verify(try token([:]), policy))
        XCTAssertJOSEError(.invalidClaim, try verify(try token(["aud": [1]]), policy))
    }

    func testDuplicateClaimsRejected() throws {
        let duplicate = try signRaw(header: #"{"alg":"ES256"}"#,
                                    payload: #"{"iss":"https://issuer.example","sub":"admin","sub":"u1","exp":1750000300,"iat":1750000000}"#, key: key)
        XCTAssertJOSEError(.duplicateMember, try verify(duplicate))
    }

    func testSizeAndDepthLimits() throws {
        let big = try token(["pad": .string(String(repeating: "x", count: 20_000))])
        XCTAssertJOSEError(.tooLarge, try verify(big))
        var deep: JSONValue = "x"
        for _ in 0..<40 { deep = .array([deep]) }
        XCTAssertJOSEError(.badJSON, try verify(try token(["deep": deep])))
    }

    func testNoTimeChecksWithoutPolicy() throws {
        let lax = JWTVerificationPolicy(allowedAlgorithms: [.es256], keys: .single(key.publicJWK), requiredClaims: [])
        XCTAssertNoThrow(try verify(try token([:], removing: ["exp", "iat", "iss", "sub"]), lax))
    }
}
