// Tests: a valid request met by a storage outage is answered 503 with a stable code, not as the client's fault.
import Foundation
import Logging
import HTTPTypes
import KeywardJOSE
import XCTest

@testable import KeywardServer

/// Found by tests/faults/pgrestart.py: during a PostgreSQL restart the token endpoint told clients with valid proofs
/// `invalid_dpop_proof` ("DPoP replay check failed"), a 400 that says the proof is bad and must not be retried.
final class StorageOutageTests: XCTestCase {
    /// Single-use records that cannot be written: the database went away after the realm and client were read.
    private struct Unwritable: SingleUseStore {
        func recordOnce(scope: String, key: String, expiresAt: Date, now: Date) async throws -> Bool {
            throw StoreError.unavailable("simulated outage")
        }
        func recordEachOnce(_ entries: [SingleUseEntry], now: Date) async throws -> [Bool] {
            throw StoreError.unavailable("simulated outage")
        }
        func deleteExpired(now: Date) async throws -> Int { 0 }
    }

    func testAValidProofMetByAnUnwritableReplayMemoryIsA503() async throws {
        try await TestServer.forEachEngine { server, _ in
            let oauth = server.runtime.oauth
            let tokens = TokenService(
                clients: oauth.clients, issuer: oauth.accessTokens, singleUse: Unwritable(),
                dpopOptions: OAuthAssembly.dpopOptions(maxAge: 60, futureSkew: 15), nonces: nil, clock: server.clock, metrics: KeywardMetrics(),
                deviceKeys: DeviceKeys(), logger: Logger(label: "test")
            )
            let found = try await oauth.realms.realm(named: "demo")
            let realm = try XCTUnwrap(found)
            let request = TokenService.Request(
                realm: realm,
                form: ["grant_type": "client_credentials", "client_id": "push-device-client", "client_secret": "device-client-secret"],
                authorization: [], dpopProofs: [try server.tokenProof(try SigningKey.generate(.es256))], url: server.tokenURL
            )
            do {
                _ = try await tokens.token(request)
                XCTFail("a token was issued without its proof's replay check")
            } catch let failure as OAuthFailure {
                XCTAssertEqual(failure.status, 503, "\(failure)")
                XCTAssertEqual(failure.code, .unavailable, "\(failure)")
            }
        }
    }
}

