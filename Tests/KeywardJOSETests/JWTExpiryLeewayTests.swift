// Tests: a JWT's exp can be checked exactly while iat and nbf keep their clock-skew leeway.
import Foundation
import KeywardJOSE
import XCTest

/// `expiryLeeway` lets `exp` be checked exactly (the push-MFA login token, as the original checks it) while
/// `iat` / `nbf` keep a clock-skew leeway.
final class JWTExpiryLeewayTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func token(_ claims: JSONObject, key: SigningKey) throws -> String {
        try JWS.sign(header: ["typ": "JWT"], claims: claims, key: key)
    }

    func testExpIsExactWhileIatKeepsTheLeeway() throws {
        let key = try SigningKey.generate(.es256)
        let policy = JWTVerificationPolicy(allowedAlgorithms: [.es256], keys: .single(key.publicJWK), requiredClaims: [], leeway: 120, expiryLeeway: 0)
        let seconds = now.timeIntervalSince1970
        XCTAssertThrowsError(try JWTVerifier.verify(try token(["exp": .number(seconds - 1)], key: key), policy: policy, now: now)) { error in
            XCTAssertEqual((error as? JOSEError)?.code, .expired)
        }
        XCTAssertNoThrow(try JWTVerifier.verify(try token(["exp": .number(seconds + 1), "iat": .number(seconds + 60)], key: key), policy: policy, now: now))
        XCTAssertThrowsError(try JWTVerifier.verify(try token(["iat": .number(seconds + 121)], key: key), policy: policy, now: now))

        // Without expiryLeeway, exp gets the same leeway as the rest.
        var lenient = policy
        lenient.expiryLeeway = nil
        XCTAssertNoThrow(try JWTVerifier.verify(try token(["exp": .number(seconds - 1)], key: key), policy: lenient, now: now))
    }
}
