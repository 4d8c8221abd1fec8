// Test support: the shared DPoP fixture: one request, one clock, and helpers to make, accept and reject proofs.
import Foundation
import XCTest
@testable import KeywardJOSE

/// Shared fixture for the DPoP test files: one request, one clock, helpers to forge proofs.
class DPoPTestCase: XCTestCase {
    let url = "https://api.example.com/v1/resource"
    let now = Date(timeIntervalSince1970: 1_750_000_000)
    let key = TestKeys.es256

    var jwkJSON: String { String(decoding: StrictJSON.serialize(key.publicJWK.requiredMembers), as: UTF8.self) }

    func standardClaims(jti: String = "jti-1") -> String {
        #"{"jti":"\#(jti)","htm":"POST","htu":"\#(url)","iat":1750000000}"#
    }

    func makeProof(key: SigningKey? = nil, method: String = "POST", url: String? = nil, issuedAt: Date? = nil, jti: String? = nil,
                   accessToken: String? = nil, nonce: String? = nil,
                   extraClaims: JSONObject = [:], extraHeader: JSONObject = [:]) throws -> String {
        try DPoPProof.make(key: key ?? self.key, method: method, url: url ?? self.url, issuedAt: issuedAt ?? now, jti: jti,
                           accessToken: accessToken, nonce: nonce, extraClaims: extraClaims, extraHeader: extraHeader)
    }

    func makeVerifier(_ options: DPoPVerifier.Options = .init()) -> (DPoPVerifier, MemoryReplayCache) {
        let cache = MemoryReplayCache()
        return (DPoPVerifier(options: options, replayCache: cache), cache)
    }

    @discardableResult
    func accept(_ proof: String, method: String = "POST", url: String? = nil, accessToken: String? = nil,
                expectedThumbprint: String? = nil, expectedNonce: String? = nil, verificationKey: JWK? = nil,
                verifier: DPoPVerifier? = nil, file: StaticString = #filePath, line: UInt = #line) async -> DPoPVerifier.Verified? {
        do {
            return try await (verifier ?? makeVerifier().0).verify(
                proof: proof, method: method, url: url ?? self.url, accessToken: accessToken,
                expectedThumbprint: expectedThumbprint, expectedNonce: expectedNonce, verificationKey: verificationKey, now: now)
        } catch {
            XCTFail("proof rejected: \(error)", file: file, line: line)
            return nil
        }
    }

    func reject(_ proof: String, _ reason: String, code: DPoPError.Code = .invalidProof, method: String = "POST", url: String? = nil,
                accessToken: String? = nil, expectedThumbprint: String? = nil, expectedNonce: String? = nil,
                verificationKey: JWK? = nil, verifier: DPoPVerifier? = nil,
                file: StaticString = #filePath, line: UInt = #line) async {
        do {
            _ = try await (verifier ?? makeVerifier().0).verify(
                proof: proof, method: method, url: url ?? self.url, accessToken: accessToken,
                expectedThumbprint: expectedThumbprint, expectedNonce: expectedNonce, verificationKey: verificationKey, now: now)
            XCTFail("proof accepted, expected \(reason)", file: file, line: line)
        } catch {
            XCTAssertEqual(error.code, code, error.message, file: file, line: line)
            XCTAssertEqual(error.reason.rawValue, reason, error.message, file: file, line: line)
        }
    }
}
