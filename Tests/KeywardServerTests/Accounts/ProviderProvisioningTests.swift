import Foundation
@testable import KeywardServer
import XCTest

/// Provider identities become users idempotently: concurrent first sign-ins of one identity make one user, every
/// sign-in stores what the provider said and when, and a disabled user stays refused.
final class ProviderProvisioningTests: XCTestCase {
    func testTwentyConcurrentFirstSignInsOfOneIdentityMakeOneUser() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            let outcomes = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let signedIn = try await users.signInWithProvider(
                            realm: "demo", issuer: "https://idp.example.test", subject: "alice-sub",
                            details: .init(alias: "corp", email: "alice@example.test", emailVerified: true, name: "Alice")
                        )
                        return (signedIn.user.id, signedIn.created)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(Set(outcomes.map(\.0)).count, 1, "one user for the identity")
            XCTAssertEqual(outcomes.filter(\.1).count, 1, "created once")
            let linked = try await users.user(realm: "demo", issuer: "https://idp.example.test", subject: "alice-sub")
            XCTAssertEqual(linked?.identity.kind, .provider)
            XCTAssertEqual(linked?.identity.details?.alias, "corp")
            XCTAssertEqual(linked?.identity.details?.email, "alice@example.test")
            XCTAssertEqual(linked?.identity.details?.emailVerified, true)
            XCTAssertNotNil(linked?.identity.details?.lastLoginAt)
            XCTAssertNil(linked?.user.passwordHash, "no password: the provider is how this user signs in")
        }
    }

    func testASignInUpdatesTheProfileAndTheSameSubjectAtAnotherIssuerIsAnotherUser() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            let first = try await users.signInWithProvider(
                realm: "demo", issuer: "https://idp.example.test", subject: "42", details: .init(alias: "corp", email: "old@example.test", emailVerified: false, name: nil)
            )
            server.clock.advance(by: 60)
            let again = try await users.signInWithProvider(
                realm: "demo", issuer: "https://idp.example.test", subject: "42", details: .init(alias: "corp", email: "new@example.test", emailVerified: true, name: "N")
            )
            XCTAssertEqual(again.user.id, first.user.id)
            XCTAssertFalse(again.created)
            let linked = try await users.user(realm: "demo", issuer: "https://idp.example.test", subject: "42")
            XCTAssertEqual(linked?.identity.details?.email, "new@example.test")
            XCTAssertEqual(linked?.identity.details?.name, "N")

            // Mix-up defence at the account level: a subject names a user only at its own issuer.
            let elsewhere = try await users.signInWithProvider(
                realm: "demo", issuer: "https://other-idp.example.test", subject: "42", details: .init(alias: "other", email: nil, emailVerified: nil, name: nil)
            )
            XCTAssertNotEqual(elsewhere.user.id, first.user.id)
            XCTAssertTrue(elsewhere.created)
        }
    }
}
