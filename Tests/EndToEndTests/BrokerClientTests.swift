// Tests: KeywardKit's BrokerClient against a live server: an app's session key gets a delegation through the relay
// and the person's sign-in, takes the hand-off once, and exchanges the delegation for tokens bound to the key.
import Foundation
import KeywardJOSE
import KeywardKit
import KeywardServer
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class BrokerClientTests: XCTestCase {
    func testAnAppGetsADelegationForItsSessionKeyAndTokensBoundToIt() async throws {
        try await LiveServer.run { baseURL, runtime in
            let issuer = baseURL + "/realms/demo"
            let returnURL = "https://app.example.com/broker"
            let redirects = try ClientRedirects(redirectURIs: [returnURL], postLogoutRedirectURIs: [], firstParty: true, requirePAR: false, broker: true)
            _ = try await runtime.oauth.clients.createPublicClient(realm: "demo", clientId: "broker-app", redirects: redirects)
            let configuration = BrokerClient.Configuration(issuer: issuer, clientId: "broker-app", returnURL: returnURL)
            let client = BrokerClient(configuration: configuration, sessionKey: DPoPSigner(key: try SigningKey.generate(.edDSA)))

            let request = try client.startRelay()
            let callback = try await PageWalker(baseURL: baseURL).signIn(at: request.url, username: "test", password: "test", appPrefix: returnURL)
            XCTAssertTrue(callback.absoluteString.hasPrefix(returnURL + "#code="), callback.absoluteString)
            let signedIn = try await client.finish(request, callback: callback)
            let user = try await runtime.accounts.users.user(realm: "demo", username: "test")
            XCTAssertEqual(signedIn.subject, user?.id)
            XCTAssertEqual(signedIn.tokenType, "DPoP")
            let access = try UnverifiedJWT(signedIn.accessToken).claims
            XCTAssertEqual(access["cnf"]?.objectValue?["jkt"]?.stringValue, client.sessionKey.thumbprint, "bound to the session key")

            // The hand-off was taken: the same answer again finds nothing.
            do {
                _ = try await client.finish(request, callback: callback)
                XCTFail("a hand-off was taken twice")
            } catch let error as KeywardKitError {
                guard case .server(400, "handoff_invalid", _) = error else { return XCTFail("\(error)") }
            }

            // The delegation buys new tokens with the key, and nothing without it.
            let again = try await client.exchange(delegation: signedIn.delegation)
            XCTAssertEqual(again.tokenType, "DPoP")
            let thief = BrokerClient(configuration: configuration, sessionKey: DPoPSigner(key: try SigningKey.generate(.es256)))
            do {
                _ = try await thief.exchange(delegation: signedIn.delegation)
                XCTFail("another key exchanged the delegation")
            } catch let error as KeywardKitError {
                guard case .exchangeRefused(400, "invalid_dpop_proof", "delegation_key_mismatch", _) = error else { return XCTFail("\(error)") }
            }
        }
    }
}
