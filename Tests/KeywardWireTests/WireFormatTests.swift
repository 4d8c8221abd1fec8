// Tests: the JSON member names and error codes clients depend on stay as they are.
import Foundation
import KeywardWire
import XCTest

/// The JSON shapes clients depend on; a renamed key here is a breaking change.
final class WireFormatTests: XCTestCase {
    func testOAuthErrorUsesRFC6749MemberNames() throws {
        let data = try JSONEncoder().encode(OAuthErrorBody(error: .invalidDPoPProof, errorDescription: "replayed"))
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: String])
        XCTAssertEqual(object, ["error": "invalid_dpop_proof", "error_description": "replayed"])
    }

    func testTokenResponseUsesRFC6749MemberNames() throws {
        let json = #"{"access_token":"a.b.c","token_type":"DPoP","expires_in":300,"scope":"x"}"#
        let decoded = try JSONDecoder().decode(TokenResponse.self, from: Data(json.utf8))
        XCTAssertEqual(decoded, TokenResponse(accessToken: "a.b.c", tokenType: "DPoP", expiresIn: 300, scope: "x"))
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: try JSONEncoder().encode(decoded)) as? [String: Any])
        XCTAssertEqual(Set(object.keys), ["access_token", "token_type", "expires_in", "scope"])
    }

    func testErrorCodesAreStable() {
        XCTAssertEqual(ErrorCode.useDPoPNonce.rawValue, "use_dpop_nonce")
        XCTAssertEqual(ErrorCode.invalidToken.rawValue, "invalid_token")
        XCTAssertEqual(ErrorCode.realmNotFound.rawValue, "realm_not_found")
        XCTAssertEqual(Set(ErrorCode.allCases.map(\.rawValue)).count, ErrorCode.allCases.count)
    }

    func testDiscoveryMetadataNames() throws {
        let metadata = ProviderMetadata(
            issuer: "i", jwksURI: "j", tokenEndpoint: "t", grantTypesSupported: [], tokenEndpointAuthMethodsSupported: [],
            dpopSigningAlgValuesSupported: ["ES256"], idTokenSigningAlgValuesSupported: [], responseTypesSupported: [],
            subjectTypesSupported: [], scopesSupported: []
        )
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: try JSONEncoder().encode(metadata)) as? [String: Any])
        XCTAssertEqual(object["dpop_signing_alg_values_supported"] as? [String], ["ES256"])
        XCTAssertEqual(object["jwks_uri"] as? String, "j")
        XCTAssertEqual(object["token_endpoint"] as? String, "t")
    }
}
