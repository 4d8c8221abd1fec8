// Tests: KeywardKit's TokenClient against a live server: DPoP-bound tokens for each key type, server error codes.
import Foundation
import KeywardJOSE
import KeywardKit
import KeywardWire
import XCTest

/// The device SDK against a real server over real HTTP (URLSession → Hummingbird on loopback).
final class KeywardKitAgainstServerTests: XCTestCase {
    func testDeviceObtainsBoundTokenAndCallsProtectedResource() async throws {
        try await LiveServer.run { baseURL in
            let issuer = baseURL + "/realms/demo"
            for algorithm in [JWSAlgorithm.es256, .rs256, .edDSA] {
                let signer = DPoPSigner(key: try SigningKey.generate(algorithm))
                let client = TokenClient(issuer: issuer, clientId: "push-device-client", clientSecret: "device-client-secret", signer: signer)
                let token = try await client.clientCredentials()
                XCTAssertEqual(token.tokenType, "DPoP")

                let (data, response) = try await client.send("GET", issuer + "/v1/whoami", accessToken: token.accessToken)
                XCTAssertEqual(response.statusCode, 200, String(decoding: data, as: UTF8.self))
                let whoami = try JSONDecoder().decode(WhoAmIResponse.self, from: data)
                XCTAssertEqual(whoami.cnf?.jkt, signer.thumbprint)
                XCTAssertEqual(whoami.iss, issuer)
            }
        }
    }

    func testWrongSecretSurfacesTheServerErrorCode() async throws {
        try await LiveServer.run { baseURL in
            let client = TokenClient(
                issuer: baseURL + "/realms/demo", clientId: "push-device-client", clientSecret: "wrong",
                signer: DPoPSigner(key: try SigningKey.generate(.es256))
            )
            do {
                _ = try await client.clientCredentials()
                XCTFail("accepted a wrong secret")
            } catch let error as KeywardKitError {
                XCTAssertEqual(error, .server(status: 401, code: "invalid_client", description: "client authentication failed"))
            }
        }
    }
}
