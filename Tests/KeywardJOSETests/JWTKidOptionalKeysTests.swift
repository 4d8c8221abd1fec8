// Tests: kid-optional key sets: a kid selects exactly, and without one only a few fitting keys are tried.
import Foundation
import XCTest
@testable import KeywardJOSE

/// `.kidOptional` key sets (host-token issuers, whose tokens may omit `kid`): a kid still selects exactly; without
/// one, only keys fit for the header's algorithm are tried, at most `maxKeysTried`, and never one pinned elsewhere.
final class JWTKidOptionalKeysTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_750_000_000)
    let claims: JSONObject = ["iss": "i", "exp": 1_750_000_300, "iat": 1_750_000_000]

    private func policy(_ keys: [JWK]) -> JWTVerificationPolicy {
        JWTVerificationPolicy(allowedAlgorithms: [.es256, .rs256], keys: .kidOptional(JWKSet(keys: keys)))
    }

    private func key(_ signer: SigningKey, kid: String?, alg: JWSAlgorithm? = nil) -> JWK {
        var key = signer.publicJWK
        key.kid = kid
        key.alg = alg
        return key
    }

    func testWithoutAKidTheFitKeysAreTriedInOrder() throws {
        let signers = try (0..<3).map { _ in try SigningKey.generate(.es256) }
        let rsa = try SigningKey.generate(.rs256)
        let keys = [key(rsa, kid: "r"), key(signers[0], kid: "a"), key(signers[1], kid: "b")]
        let token = try JWS.sign(header: [:], claims: claims, key: signers[1])
        XCTAssertEqual(try JWTVerifier.verify(token, policy: policy(keys), now: now).key.kid, "b")

        let stranger = try JWS.sign(header: [:], claims: claims, key: signers[2])
        XCTAssertJOSEError(.badSignature, try JWTVerifier.verify(stranger, policy: policy(keys), now: now), "none verifies")
        XCTAssertJOSEError(.unknownKeyID, try JWTVerifier.verify(stranger, policy: policy([key(rsa, kid: "r")]), now: now), "no ES256 key")
    }

    func testAKidStillSelectsExactly() throws {
        let a = try SigningKey.generate(.es256), b = try SigningKey.generate(.es256)
        let keys = [key(a, kid: "a"), key(b, kid: "b")]
        let named = try JWS.sign(header: ["kid": "a"], claims: claims, key: b)
        XCTAssertJOSEError(.badSignature, try JWTVerifier.verify(named, policy: policy(keys), now: now), "kid a, signed by b: b is not tried")
        let unknown = try JWS.sign(header: ["kid": "c"], claims: claims, key: a)
        XCTAssertJOSEError(.unknownKeyID, try JWTVerifier.verify(unknown, policy: policy(keys), now: now))
    }

    func testAtMostMaxKeysTriedAndPinnedKeysSkipped() throws {
        let signers = try (0...JWTVerificationPolicy.maxKeysTried).map { _ in try SigningKey.generate(.es256) }
        let keys = signers.enumerated().map { key($0.element, kid: "k\($0.offset)") }
        let last = try JWS.sign(header: [:], claims: claims, key: signers[JWTVerificationPolicy.maxKeysTried])
        XCTAssertJOSEError(.badSignature, try JWTVerifier.verify(last, policy: policy(keys), now: now), "the fifth key is never tried")

        let pinned = try SigningKey.generate(.es256)
        let token = try JWS.sign(header: [:], claims: claims, key: pinned)
        // A P-256 key pinned to ES384 fits no algorithm, so an ES256 token never tries it.
        let pinnedKey = key(pinned, kid: "p", alg: .es384)
        XCTAssertJOSEError(.unknownKeyID, try JWTVerifier.verify(token, policy: policy([pinnedKey]), now: now))
    }
}
