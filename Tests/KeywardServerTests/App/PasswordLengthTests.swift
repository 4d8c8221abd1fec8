// Tests: passwords are pre-hashed so bytes past bcrypt's 72 count, and old-style hashes verify and are upgraded.
import Foundation
import HummingbirdBcrypt
@testable import KeywardServer
import XCTest

/// bcrypt reads at most 72 bytes of its input. Keyward pre-hashes every password (HMAC-SHA-256 under a key
/// derived from the master key, base64) so that all of a long password counts, and keeps verifying hashes
/// stored the old way until their owner next signs in.
final class PasswordLengthTests: XCTestCase {
    func testBytesPastTheSeventySecondCount() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            let shared = String(repeating: "a", count: 72)
            _ = try await users.createUser(realm: "demo", username: "long", password: shared + "-the-real-ending")
            let truncated = try await users.authenticate(realm: "demo", username: "long", password: shared + "-another-ending")
            XCTAssertEqual(truncated, .invalidCredentials, "a password that differs only after byte 72 must not sign in")
            let prefixOnly = try await users.authenticate(realm: "demo", username: "long", password: shared)
            XCTAssertEqual(prefixOnly, .invalidCredentials)
            guard case .authenticated = try await users.authenticate(realm: "demo", username: "long", password: shared + "-the-real-ending") else {
                return XCTFail("the right long password was refused")
            }
        }
    }

    func testAHashStoredTheOldWayStillVerifiesAndIsUpgradedOnSignIn() async throws {
        try await TestServer.forEachEngine { server, _ in
            let store = SQLUserStore(database: server.runtime.database)
            let legacyHash = Bcrypt.hash("legacy-password", cost: 4)
            try await store.createUser(User(
                id: UUID().uuidString, realm: "demo", username: "legacy", passwordHash: legacyHash, enabled: true, createdAt: server.clock.now()
            ))
            let wrong = try await server.runtime.accounts.users.authenticate(realm: "demo", username: "legacy", password: "not-it")
            XCTAssertEqual(wrong, .invalidCredentials)
            let unchanged = try await store.user(realm: "demo", username: "legacy")
            XCTAssertEqual(unchanged?.passwordHash, legacyHash, "a failed sign-in changes nothing")

            guard case .authenticated = try await server.runtime.accounts.users.authenticate(realm: "demo", username: "legacy", password: "legacy-password") else {
                return XCTFail("the legacy hash no longer verifies")
            }
            let upgradedUser = try await store.user(realm: "demo", username: "legacy")
            let upgraded = try XCTUnwrap(upgradedUser?.passwordHash)
            XCTAssertNotEqual(upgraded, legacyHash, "upgraded to the pre-hashed form on a successful sign-in")
            XCTAssertFalse(Bcrypt.verify("legacy-password", hash: upgraded), "the stored hash is no longer of the raw password")
            guard case .authenticated = try await server.runtime.accounts.users.authenticate(realm: "demo", username: "legacy", password: "legacy-password") else {
                return XCTFail("the upgraded hash does not verify")
            }
            let again = try await server.runtime.accounts.users.authenticate(realm: "demo", username: "legacy", password: "legacy-passwordX")
            XCTAssertEqual(again, .invalidCredentials)
        }
    }
}
