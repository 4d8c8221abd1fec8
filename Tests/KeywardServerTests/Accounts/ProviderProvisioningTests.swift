// Tests: provider sign-ins make users idempotently, link by e-mail only when trusted and verified, name safely.
import Foundation
@testable import KeywardServer
import XCTest

/// Provider identities become users idempotently: concurrent first sign-ins of one identity make one user, every
/// sign-in stores what the provider said and when, and a disabled user stays refused.
final class ProviderProvisioningTests: XCTestCase {
    func testTwentyConcurrentFirstSignInsOfOneIdentityMakeOneUser() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            let before = try await users.listUsers(realm: "demo").count
            let outcomes = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let signedIn = try await users.signInWithProvider(
                            realm: "demo", issuer: "https://idp.example.test", subject: "alice-sub",
                            details: .init(alias: "corp", email: "alice@example.test", emailVerified: true, name: "Alice"), trustEmail: true
                        )
                        return (signedIn.user.id, signedIn.created)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(Set(outcomes.map(\.0)).count, 1, "one user for the identity")
            XCTAssertEqual(outcomes.filter(\.1).count, 1, "created once")
            // The losers' user rows went with their refused identity inserts: no account without a way in.
            let after = try await users.listUsers(realm: "demo")
            XCTAssertEqual(after.count, before + 1, after.map(\.username).joined(separator: ", "))
            let linked = try await users.user(realm: "demo", issuer: "https://idp.example.test", subject: "alice-sub")
            XCTAssertEqual(linked?.identity.kind, .provider)
            XCTAssertEqual(linked?.identity.details?.alias, "corp")
            XCTAssertEqual(linked?.identity.details?.email, "alice@example.test")
            XCTAssertEqual(linked?.identity.details?.emailVerified, true)
            XCTAssertNotNil(linked?.identity.details?.lastLoginAt)
            XCTAssertNil(linked?.user.passwordHash, "no password: the provider is how this user signs in")
            let userSignedIn = try await server.runtime.database.sql.raw(
                "SELECT last_login_at FROM users WHERE realm = 'demo' AND id = \(bind: outcomes[0].0)"
            ).first()?.decode(column: "last_login_at", as: Int64?.self)
            XCTAssertEqual(userSignedIn, StorageTime.milliseconds(server.clock.now()), "the first sign-in is the user's last one")
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

            // The user's row keeps the time of its last provider sign-in, the first one included.
            let userSignedIn = { @Sendable () async throws -> Int64? in
                try await server.runtime.database.sql.raw(
                    "SELECT last_login_at FROM users WHERE realm = 'demo' AND id = \(bind: first.user.id)"
                ).first()?.decode(column: "last_login_at", as: Int64?.self)
            }
            let afterSecond = try await userSignedIn()
            XCTAssertEqual(afterSecond, StorageTime.milliseconds(server.clock.now()))
            server.clock.advance(by: 30)
            _ = try await users.signInWithProvider(
                realm: "demo", issuer: "https://idp.example.test", subject: "42", details: .init(alias: "corp", email: nil, emailVerified: nil, name: nil)
            )
            let afterThird = try await userSignedIn()
            XCTAssertEqual(afterThird, StorageTime.milliseconds(server.clock.now()))
            let kept = try await users.user(realm: "demo", issuer: "https://idp.example.test", subject: "42")
            XCTAssertEqual(kept?.identity.details?.name, "N", "a sign-in without a name keeps the stored one")

            // Mix-up defence at the account level: a subject names a user only at its own issuer.
            let elsewhere = try await users.signInWithProvider(
                realm: "demo", issuer: "https://other-idp.example.test", subject: "42", details: .init(alias: "other", email: nil, emailVerified: nil, name: nil)
            )
            XCTAssertNotEqual(elsewhere.user.id, first.user.id)
            XCTAssertTrue(elsewhere.created)
        }
    }

    /// E-mail addresses are how accounts get taken over: a new identity links to an account by address only when
    /// its provider is trusted for it and both addresses are verified; otherwise the person is sent to sign in first.
    func testANewIdentityLinksByEmailOnlyWhenTrustedAndVerifiedOnBothSides() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            try await Self.addProviders(server, ["corp": ("https://a.example.test", true), "google": ("https://b.example.test", true), "other": ("https://c.example.test", false)])
            let existing = try await users.signInWithProvider(
                realm: "demo", issuer: "https://a.example.test", subject: "a1", details: .init(alias: "corp", email: "Dana@Example.test", emailVerified: true, name: nil),
                trustEmail: true
            ).user
            func signIn(_ subject: String, issuer: String = "https://b.example.test", verified: Bool?, trusted: Bool) async throws -> (User, Bool) {
                let outcome = try await users.signInWithProvider(
                    realm: "demo", issuer: issuer, subject: subject, details: .init(alias: "google", email: "dana@example.TEST", emailVerified: verified, name: nil),
                    trustEmail: trusted
                )
                return (outcome.user, outcome.created)
            }
            for (verified, trusted) in [(true, false), (false, true), (nil, true)] as [(Bool?, Bool)] {
                do {
                    _ = try await signIn("b-\(String(describing: verified))-\(trusted)", verified: verified, trusted: trusted)
                    XCTFail("linked or created with verified \(String(describing: verified)), trusted \(trusted)")
                } catch let error as UserError {
                    XCTAssertEqual(error, .accountExists(providers: ["corp"]))
                }
            }
            let refused = try await users.user(realm: "demo", issuer: "https://b.example.test", subject: "b-Optional(true)-false")
            XCTAssertNil(refused, "a refused sign-in stores nothing")

            let (linked, created) = try await signIn("b2", verified: true, trusted: true)
            XCTAssertEqual(linked.id, existing.id, "trusted provider, both verified: the same account")
            XCTAssertFalse(created)
            let identities = try await users.identities(realm: "demo", userId: existing.id)
            XCTAssertEqual(Set(identities.map(\.issuer)), ["https://a.example.test", "https://b.example.test"])
            XCTAssertEqual(identities.first?.details?.email, "dana@example.test", "addresses are stored lower-case")

            // An address an untrusted provider called verified vouches for nothing (security review H1): it
            // neither pulls a trusted sign-in into that account nor blocks it.
            let planted = try await users.signInWithProvider(
                realm: "demo", issuer: "https://c.example.test", subject: "c1", details: .init(alias: "other", email: "eve@example.test", emailVerified: true, name: nil)
            ).user
            let eve = try await users.signInWithProvider(
                realm: "demo", issuer: "https://b.example.test", subject: "b3", details: .init(alias: "google", email: "eve@example.test", emailVerified: true, name: nil),
                trustEmail: true
            )
            XCTAssertNotEqual(eve.user.id, planted.id)
            XCTAssertTrue(eve.created)
            XCTAssertEqual(UserService.comparableEmail("Ann.\u{212A}@Example.TEST"), "ann.\u{212A}@example.test", "only ASCII letters fold")
        }
    }

    /// Security review L3: whether an address vouches for an account is decided when it is matched, by the trust
    /// its provider has now. An identity stored verified while its provider was trusted must not pull a later
    /// sign-in into its account once the operator has stopped trusting that provider.
    func testAnAddressStoredUnderAProviderNoLongerTrustedNeitherLinksNorBlocks() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            let providers = server.runtime.accounts.providers
            try await Self.addProviders(server, ["corp": ("https://a.example.test", true), "google": ("https://b.example.test", true)])
            let planted = try await users.signInWithProvider(
                realm: "demo", issuer: "https://a.example.test", subject: "mallory",
                details: .init(alias: "corp", email: "victim@example.test", emailVerified: true, name: nil), trustEmail: true
            ).user
            try await providers.remove(realm: "demo", alias: "corp")
            try await Self.addProviders(server, ["corp": ("https://a.example.test", false)])

            let victim = try await users.signInWithProvider(
                realm: "demo", issuer: "https://b.example.test", subject: "victim",
                details: .init(alias: "google", email: "victim@example.test", emailVerified: true, name: nil), trustEmail: true
            )
            XCTAssertNotEqual(victim.user.id, planted.id, "an address stored under a provider no longer trusted linked the sign-in into its account")
            XCTAssertTrue(victim.created)
        }
    }

    /// The verified holder of an address is found however many identities hold it unverified.
    func testTheVerifiedHolderIsFoundBehindManyUnverifiedOnes() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            try await Self.addProviders(server, ["corp": ("https://a.example.test", true), "google": ("https://b.example.test", true)])
            for index in 0..<21 {
                _ = try await users.signInWithProvider(
                    realm: "demo", issuer: "https://a.example.test", subject: "unverified-\(index)",
                    details: .init(alias: "corp", email: "many@example.test", emailVerified: false, name: nil), trustEmail: true
                )
            }
            let holder = try await users.signInWithProvider(
                realm: "demo", issuer: "https://a.example.test", subject: "holder",
                details: .init(alias: "corp", email: "many@example.test", emailVerified: true, name: nil), trustEmail: true
            ).user
            let linked = try await users.signInWithProvider(
                realm: "demo", issuer: "https://b.example.test", subject: "holder-at-b",
                details: .init(alias: "google", email: "many@example.test", emailVerified: true, name: nil), trustEmail: true
            )
            XCTAssertEqual(linked.user.id, holder.id)
            XCTAssertFalse(linked.created)
        }
    }

    /// A provider that maps usernames from a claim names new users by it, but only with a valid name no one has:
    /// a name already taken (a local user's) is never a way into that account.
    func testANewUserIsNamedByTheClaimOnlyWhenTheNameIsFree() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            let local = try await users.createUser(realm: "demo", username: "grace", password: "grace-password-1")
            func signIn(_ subject: String, preferred: String?) async throws -> User {
                try await users.signInWithProvider(
                    realm: "demo", issuer: "https://a.example.test", subject: subject, details: .init(alias: "corp", email: nil, emailVerified: nil, name: nil),
                    preferredUsername: preferred
                ).user
            }
            let named = try await signIn("p-1", preferred: "ada.lovelace")
            XCTAssertEqual(named.username, "ada.lovelace")
            let taken = try await signIn("p-2", preferred: "grace")
            XCTAssertNotEqual(taken.id, local.id, "a taken name must not lead into its account")
            XCTAssertTrue(taken.username.hasPrefix("corp-"), taken.username)
            let invalid = try await signIn("p-3", preferred: "two words")
            XCTAssertTrue(invalid.username.hasPrefix("corp-"), invalid.username)
            let again = try await signIn("p-1", preferred: "someone-else")
            XCTAssertEqual(again.id, named.id)
            XCTAssertEqual(again.username, "ada.lovelace", "a returning user keeps their name")
        }
    }

    private static func addProviders(_ server: TestServer, _ providers: [String: (issuer: String, trusted: Bool)]) async throws {
        for (alias, provider) in providers {
            _ = try await server.runtime.accounts.providers.add(.init(
                realm: "demo", alias: alias, kind: .oidc, issuer: provider.issuer, clientId: "keyward", clientSecret: "secret",
                trustVerifiedEmail: provider.trusted
            ))
        }
    }
}
