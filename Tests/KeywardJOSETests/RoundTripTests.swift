// Tests: what is signed verifies with only the matching key for every algorithm, and keys survive serialization.
import Foundation
import XCTest
@testable import KeywardJOSE

/// What we sign, we (and only the matching key) can verify; keys survive storage.
final class RoundTripTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_750_000_000)

    func testSignAndVerifyEveryAlgorithm() throws {
        for algorithm in JWSAlgorithm.allCases {
            let key = TestKeys.key(for: algorithm)
            var jwk = key.publicJWK
            jwk.kid = "k1"
            let token = try JWS.sign(header: ["typ": "JWT", "kid": "k1"], claims: ["sub": "u", "exp": 1_750_000_060], key: key)
            let policy = JWTVerificationPolicy(allowedAlgorithms: [algorithm], keys: .set(JWKSet(keys: [jwk])), expectedType: "JWT")
            let verified = try JWTVerifier.verify(token, policy: policy, now: now)
            XCTAssertEqual(verified.algorithm, algorithm)
            XCTAssertEqual(verified.claims.string("sub"), "u")
            XCTAssertEqual(verified.header.string("alg"), algorithm.rawValue)

            let jws = try JWS.parse(token)
            XCTAssertTrue(jwk.verify(signature: jws.signature, over: jws.signingInput, algorithm: algorithm))
            var tampered = jws.signingInput
            tampered[tampered.count - 1] ^= 1
            XCTAssertFalse(jwk.verify(signature: jws.signature, over: tampered, algorithm: algorithm), algorithm.rawValue)
        }
    }

    func testSigningKeySerializationRoundTrip() throws {
        for algorithm in JWSAlgorithm.allCases {
            let key = TestKeys.key(for: algorithm)
            let restored = try SigningKey(algorithm: algorithm, serialized: key.serialized)
            XCTAssertEqual(restored.publicJWK, key.publicJWK, algorithm.rawValue)
            XCTAssertEqual(restored.serialized, key.serialized)
            let signature = try restored.sign(Array("hello".utf8))
            XCTAssertTrue(key.publicJWK.verify(signature: signature, over: Array("hello".utf8), algorithm: algorithm))
        }
        XCTAssertEqual(TestKeys.edDSA.serialized.count, 32)
        XCTAssertJOSEError(.invalidKey, try SigningKey(algorithm: .es256, serialized: [1, 2, 3]))
        XCTAssertJOSEError(.invalidKey, try SigningKey(algorithm: .es384, serialized: TestKeys.es256.serialized))
    }

    func testGeneratedKeysAreDistinctAndRSASizeIsConfigurable() throws {
        XCTAssertNotEqual(try SigningKey.generate(.es256).publicJWK, try SigningKey.generate(.es256).publicJWK)
        XCTAssertJOSEError(.weakKey, try SigningKey.generate(.rs256, rsaBits: 1024))
        guard case .rsa(let n, let e) = TestKeys.rsa.publicJWK.material else { return XCTFail() }
        XCTAssertEqual(n.count, 256)
        XCTAssertEqual(e, [1, 0, 1])
    }

    func testECDSASignaturesAreRawFixedLength() throws {
        XCTAssertEqual(try TestKeys.es256.sign([1]).count, 64)
        XCTAssertEqual(try TestKeys.es384.sign([1]).count, 96)
        XCTAssertEqual(try TestKeys.es512.sign([1]).count, 132)
    }

    func testSignOverridesHeaderAlg() throws {
        let token = try JWS.sign(header: ["alg": "none"], claims: [:], key: TestKeys.es256)
        XCTAssertEqual(try JWS.parse(token).header.string("alg"), "ES256")
    }
}
