// Tests: linking and unlinking provider identities: each identity has one user, and the last way in cannot go.
import Foundation
@testable import KeywardServer
import XCTest

/// A signed-in user links and unlinks provider identities from the account page: an identity is one user's, and
/// the last way a user signs in cannot be unlinked, even by two unlinks at once.
final class ProviderLinkTests: XCTestCase {
    static let corp = "https://corp.example.test"
    static let other = "https://other.example.test"

    func testLinkingIsIdempotentAndAnIdentityStaysWithItsUser() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            let dana = try await users.createUser(realm: "demo", username: "dana", password: "dana-password-1")
            let erin = try await users.createUser(realm: "demo", username: "erin", password: "erin-password-1")
            let details = ExternalIdentity.ProviderDetails(alias: "corp", email: "Dana@Example.test", emailVerified: true, name: "Dana")
            try await users.linkProvider(realm: "demo", userId: dana.id, issuer: Self.corp, subject: "d-1", details: details, trustEmail: false)
            try await users.linkProvider(realm: "demo", userId: dana.id, issuer: Self.corp, subject: "d-1", details: details, trustEmail: false)
            let linked = try await users.user(realm: "demo", issuer: Self.corp, subject: "d-1")
            XCTAssertEqual(linked?.user.id, dana.id)
            XCTAssertEqual(linked?.identity.details?.email, "dana@example.test")
            XCTAssertEqual(linked?.identity.details?.emailVerified, false, "an untrusted provider's verified flag is not stored")
            do {
                try await users.linkProvider(realm: "demo", userId: erin.id, issuer: Self.corp, subject: "d-1", details: details, trustEmail: false)
                XCTFail("another user's identity was linked")
            } catch let error as UserError {
                XCTAssertEqual(error, .identityLinkedElsewhere)
            }
            let events = try await server.runtime.audit.events(realm: "demo", limit: 20)
            XCTAssertEqual(events.filter { $0.type == .externalIdentityLinked && $0.userId == dana.id }.count, 1, "linked once, audited once")
        }
    }

    func testTheLastWayInStaysAndAPasswordCountsAsOne() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            try await Self.addProviders(server)
            let social = try await users.signInWithProvider(
                realm: "demo", issuer: Self.corp, subject: "s-1", details: .init(alias: "corp", email: nil, emailVerified: nil, name: nil)
            ).user
            let lone = try await users.unlinkProvider(realm: "demo", userId: social.id, issuer: Self.corp, subject: "s-1")
            XCTAssertEqual(lone, .lastWayIn)
            try await users.linkProvider(
                realm: "demo", userId: social.id, issuer: Self.other, subject: "s-2", details: .init(alias: "other", email: nil, emailVerified: nil, name: nil),
                trustEmail: false
            )
            let outcome1 = try await users.unlinkProvider(realm: "demo", userId: social.id, issuer: Self.corp, subject: "s-1")
            XCTAssertEqual(outcome1, .unlinked)
            let outcome2 = try await users.unlinkProvider(realm: "demo", userId: social.id, issuer: Self.corp, subject: "s-1")
            XCTAssertEqual(outcome2, .notFound)
            let outcome3 = try await users.unlinkProvider(realm: "demo", userId: social.id, issuer: Self.other, subject: "s-2")
            XCTAssertEqual(outcome3, .lastWayIn)

            let withPassword = try await users.createUser(realm: "demo", username: "frank", password: "frank-password-1")
            try await users.linkProvider(
                realm: "demo", userId: withPassword.id, issuer: Self.corp, subject: "f-1", details: .init(alias: "corp", email: nil, emailVerified: nil, name: nil),
                trustEmail: false
            )
            let outcome4 = try await users.unlinkProvider(realm: "demo", userId: withPassword.id, issuer: Self.corp, subject: "f-1")
            XCTAssertEqual(outcome4, .unlinked)
            let events = try await server.runtime.audit.events(realm: "demo", limit: 50)
            XCTAssertEqual(events.filter { $0.type == .externalIdentityUnlinked }.count, 2)
        }
    }

    /// An account page's unlink form is the user's to fill: a NUL names no identity (PostgreSQL text cannot hold one)
    /// and is answered as any unknown identity is, on both engines, never as a store failure.
    func testANulInTheIdentityNamesNoneToUnlink() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            try await Self.addProviders(server)
            let user = try await users.createUser(realm: "demo", username: "nina", password: "nina-password-1")
            try await users.linkProvider(
                realm: "demo", userId: user.id, issuer: Self.corp, subject: "n-1", details: .init(alias: "corp", email: nil, emailVerified: nil, name: nil),
                trustEmail: false
            )
            let bySubject = try await users.unlinkProvider(realm: "demo", userId: user.id, issuer: Self.corp, subject: "n-1\u{0}")
            XCTAssertEqual(bySubject, .notFound)
            let byIssuer = try await users.unlinkProvider(realm: "demo", userId: user.id, issuer: Self.corp + "\u{0}", subject: "n-1")
            XCTAssertEqual(byIssuer, .notFound)
            let lookup = try await users.user(realm: "demo", issuer: Self.corp, subject: "n-1\u{0}")
            XCTAssertNil(lookup)
            let identities = try await users.identities(realm: "demo", userId: user.id)
            XCTAssertEqual(identities.map(\.subject), ["n-1"], "the linked identity stays")
        }
    }

    func testTwoUnlinksAtOnceLeaveOneWayIn() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            try await Self.addProviders(server)
            for round in 0..<5 {
                let user = try await Self.userAtBothProviders(users, subject: "r\(round)")
                async let first = users.unlinkProvider(realm: "demo", userId: user.id, issuer: Self.corp, subject: "r\(round)")
                async let second = users.unlinkProvider(realm: "demo", userId: user.id, issuer: Self.other, subject: "r\(round)")
                let outcomes = try await [first, second]
                XCTAssertEqual(outcomes.filter { $0 == .unlinked }.count, 1, "\(outcomes)")
                XCTAssertEqual(outcomes.filter { $0 == .lastWayIn }.count, 1, "\(outcomes)")
                let left = try await users.identities(realm: "demo", userId: user.id)
                XCTAssertEqual(left.count, 1)
            }
        }
    }

    /// An identity at a provider the realm no longer has signs no one in, so it does not count as a way in: the
    /// user's one working provider stays (session 22 review).
    func testAnIdentityAtARemovedProviderIsNoWayIn() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            try await Self.addProviders(server)
            let user = try await Self.userAtBothProviders(users, subject: "gone-1")
            try await server.runtime.accounts.providers.remove(realm: "demo", alias: "corp")
            let working = try await users.unlinkProvider(realm: "demo", userId: user.id, issuer: Self.other, subject: "gone-1")
            XCTAssertEqual(working, .lastWayIn, "the identity at the removed provider does not sign in")
            let stale = try await users.unlinkProvider(realm: "demo", userId: user.id, issuer: Self.corp, subject: "gone-1")
            XCTAssertEqual(stale, .unlinked, "the dead identity may go")
        }
    }

    /// A user made by a sign-in at corp, with the same subject at other linked to it.
    private static func userAtBothProviders(_ users: UserService, subject: String) async throws -> User {
        let user = try await users.signInWithProvider(
            realm: "demo", issuer: corp, subject: subject, details: .init(alias: "corp", email: nil, emailVerified: nil, name: nil)
        ).user
        try await users.linkProvider(
            realm: "demo", userId: user.id, issuer: other, subject: subject, details: .init(alias: "other", email: nil, emailVerified: nil, name: nil),
            trustEmail: false
        )
        return user
    }

    static func addProviders(_ server: TestServer) async throws {
        for (alias, issuer) in [("corp", corp), ("other", other)] {
            _ = try await server.runtime.accounts.providers.add(.init(
                realm: "demo", alias: alias, kind: .oidc, issuer: issuer, clientId: "keyward", clientSecret: "secret"
            ))
        }
    }

    /// The flow's intent travels in the sealed cookie: a re-authentication and a link come back as they left.
    func testTheTransactionKeepsItsIntentThroughTheCookie() throws {
        let keys = TransactionKeys(masterKey: try MasterKey(bytes: Array(repeating: 7, count: 32)))
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let begun = SignInTransaction.begin(
            realm: "demo", alias: "corp", issuer: Self.corp, returnTo: "/realms/demo/account", reauthenticate: true, linkUserId: "user-1", now: now
        )
        let name = SignInTransaction.cookieName(state: begun.state, secure: true)
        let opened = try SignInTransaction.open(begun.cookieValue(keys: keys, cookieName: name), keys: keys, cookieName: name, now: now)
        XCTAssertEqual(opened, begun)
        let plain = SignInTransaction.begin(realm: "demo", alias: "corp", issuer: Self.corp, returnTo: nil, now: now)
        let plainName = SignInTransaction.cookieName(state: plain.state, secure: false)
        let reopened = try SignInTransaction.open(plain.cookieValue(keys: keys, cookieName: plainName), keys: keys, cookieName: plainName, now: now)
        XCTAssertFalse(reopened.reauthenticate)
        XCTAssertNil(reopened.linkUserId)
    }
}
