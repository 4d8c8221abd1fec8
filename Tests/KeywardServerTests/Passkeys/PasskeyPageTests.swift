// Tests: passkeys on the pages: the sign-in page's button and autofill, the second step after a password, the
// account page's list, rename and remove, and a passkey counted as a way in (never the last one removed).
import AttestationTestSupport
import Foundation
import KeywardJOSE
@testable import KeywardServer
import KeywardWire
import XCTest

final class PasskeyPageTests: XCTestCase {
    func testTheSignInPageOffersPasskeysAsTheRealmSays() async throws {
        try await TestServer.forEachEngine { server, client in
            let off = try await TestBrowser(client).get("/realms/demo/login")
            XCTAssertFalse(off.contains("data-passkey-signin"))
            XCTAssertTrue(off.contains(#"autocomplete="username""#))
            try await PasskeyFixture.enable(server)
            let optional = try await TestBrowser(client).get("/realms/demo/login")
            XCTAssertTrue(optional.contains("data-passkey-signin"), optional.html)
            XCTAssertTrue(optional.contains(#"autocomplete="username""#), "the autofill token only where the page asks for autofill")
            XCTAssertFalse(optional.contains("data-conditional"))
            XCTAssertEqual(optional.capture(#"data-passkey-signin data-options-url="[^"]*" data-url="[^"]*" data-csrf="([^"]*)""#), optional.field("csrf"))
            try await PasskeyFixture.enable(server) { $0.mode = .preferred }
            let preferred = try await TestBrowser(client).get("/realms/demo/login")
            XCTAssertTrue(preferred.contains(#"data-conditional="1""#))
            XCTAssertTrue(preferred.contains(#"autocomplete="username webauthn""#))
        }
    }

    func testAPasskeyIsTheSecondStepAfterAPassword() async throws {
        try await TestServer.forEachEngine { server, client in
            try await PasskeyFixture.enable(server)
            let passkey = try PasskeyFixture.authenticator()
            _ = try await PasskeyFixture.register(TestBrowser(client), passkey)

            let browser = TestBrowser(client)
            let afterPassword = try await browser.signIn()
            XCTAssertEqual(afterPassword.location, "/realms/demo/login/passkey")
            let account = try await browser.get("/realms/demo/account")
            XCTAssertEqual(account.status, .seeOther, "not signed in until the second step")
            let step = try await browser.get("/realms/demo/login/passkey")
            XCTAssertEqual(step.status, .ok)
            XCTAssertTrue(step.contains("data-passkey-step"))
            let csrf = try XCTUnwrap(step.field("csrf"))
            let options = try PasskeyFixture.decode(
                PublicKeyCredentialRequestOptionsJSON.self,
                try await browser.postJSON(PasskeyFixture.base + "/authentication/options", "{}", headers: PasskeyFixture.headers(csrf))
            )
            XCTAssertEqual(options.allowCredentials.map(\.id), [Base64URL.encode(passkey.credentialID)], "the second step names the user's passkeys")
            var verifiedOnce = passkey
            verifiedOnce.signCount = 1
            let done = try await PasskeyFixture.answer(browser, verifiedOnce, challenge: options.challenge, csrf: csrf, userHandle: nil)
            XCTAssertEqual(done.status, .ok, done.html)
            XCTAssertEqual(try PasskeyFixture.decode(PasskeySignInResponse.self, done).amr, ["pwd", "hwk", "user"])
            let accountPage = try await browser.get("/realms/demo/account")
            XCTAssertEqual(accountPage.status, .ok)
            let session = try await browser.get("/realms/demo/v1/auth/session")
            XCTAssertTrue(session.html.contains(#""amr":["pwd","hwk","user"]"#), session.html)

            // Another account's passkey cannot finish this person's second step.
            _ = try await server.runtime.accounts.users.createUser(realm: "demo", username: "other", password: "other-password-1")
            let other = try PasskeyFixture.authenticator()
            let otherBrowser = TestBrowser(client)
            _ = try await otherBrowser.signIn(username: "other", password: "other-password-1")
            let otherRegistered = try await PasskeyFixture.register(otherBrowser, other, signIn: false)
            XCTAssertEqual(otherRegistered.status, .created)
            let mixing = TestBrowser(client)
            _ = try await mixing.signIn()
            let mixingStep = try await mixing.get("/realms/demo/login/passkey")
            let mixingCSRF = try XCTUnwrap(mixingStep.field("csrf"))
            let mixed = try await PasskeyFixture.signIn(mixing, other, csrf: mixingCSRF, userHandle: nil)
            XCTAssertEqual(PasskeyFixture.reason(mixed), "webauthn_user_handle_mismatch", mixed.html)
        }
    }

    /// A person with a phone and a passkey: with passkeys optional the phone is asked first and the passkey offered
    /// beside it; with passkeys preferred, the other way round.
    func testThePushStepAndThePasskeyStepOfferEachOther() async throws {
        try await TestServer.forEachEngine { server, client in
            try await PasskeyFixture.enable(server)
            _ = try await server.enrolledDevice(client)
            let owner = TestBrowser(client)
            let firstStep = try await owner.signIn()
            XCTAssertEqual(firstStep.location, "/realms/demo/login/push", "before any passkey, the phone")

            let account = try await server.runtime.accounts.users.user(realm: "demo", username: "test")
            let stored = Passkey(
                realm: "demo", credentialId: "cred-push", userId: try XCTUnwrap(account).id,
                publicKey: Base64URL.encode(try PasskeyFixture.authenticator().key.coseKey.encoded), algorithm: -7, signCount: 0, backupEligible: false,
                backedUp: false, userVerified: true, transports: [], aaguid: "00000000-0000-0000-0000-000000000000", attestationFormat: "none",
                attestationTrusted: false, name: "Laptop", createdAt: server.clock.now(), lastUsedAt: nil, possiblyClonedAt: nil
            )
            let inserted = try await server.runtime.passkeys.service.store.insert(stored)
            XCTAssertTrue(inserted)

            let optional = TestBrowser(client)
            let optionalFirst = try await optional.signIn()
            XCTAssertEqual(optionalFirst.location, "/realms/demo/login/push")
            let waiting = try await optional.get("/realms/demo/login/push")
            XCTAssertTrue(waiting.contains(#"<a href="/realms/demo/login/passkey" class="alternative">Use a passkey instead</a>"#), waiting.html)

            try await PasskeyFixture.enable(server) { $0.mode = .preferred }
            let preferred = TestBrowser(client)
            let preferredFirst = try await preferred.signIn()
            XCTAssertEqual(preferredFirst.location, "/realms/demo/login/passkey")
            let step = try await preferred.get("/realms/demo/login/passkey")
            XCTAssertTrue(step.contains(#"<a href="/realms/demo/login/push" class="alternative">Approve on your phone instead</a>"#), step.html)
        }
    }

    /// A passkey with user verification completes a sign-in, unless the realm asks for its second factor after a
    /// passkey too: then the phone is asked, and the passkey just used is neither offered again nor accepted as the
    /// second step.
    func testARealmThatAsksForTheSecondFactorAfterAPasskeyGetsIt() async throws {
        try await TestServer.forEachEngine { server, client in
            try await PasskeyFixture.enable(server)
            let passkey = try PasskeyFixture.authenticator()
            _ = try await PasskeyFixture.register(TestBrowser(client), passkey)
            _ = try await server.enrolledDevice(client)
            try await PasskeyFixture.enable(server) { $0.secondStep = true }

            let browser = TestBrowser(client)
            let csrf = try await PasskeyFixture.csrf(browser, fromLogin: true)
            var used = passkey
            used.signCount = 1
            let signedIn = try await PasskeyFixture.signIn(browser, used, csrf: csrf, userHandle: try await PasskeyFixture.handle(server))
            let answer = try PasskeyFixture.decode(PasskeySignInResponse.self, signedIn)
            XCTAssertEqual(answer.next, "/realms/demo/login/push")
            XCTAssertEqual(answer.amr, ["hwk", "user"])
            let account = try await browser.get("/realms/demo/account")
            XCTAssertEqual(account.status, .seeOther, "not signed in until the phone approves")
            let waiting = try await browser.get("/realms/demo/login/push")
            XCTAssertEqual(waiting.status, .ok)
            XCTAssertFalse(waiting.contains("Use a passkey instead"), "the passkey just used is not a second factor")
            let step = try await browser.get("/realms/demo/login/passkey")
            XCTAssertEqual(step.status, .seeOther, "no passkey step for a session that signed in with one")

            // The same passkey again, through the second step's endpoints, is a new sign-in: still the phone next.
            used.signCount = 2
            let waitingCSRF = try XCTUnwrap(waiting.field("csrf"), waiting.html)
            let again = try await PasskeyFixture.signIn(browser, used, csrf: waitingCSRF, userHandle: try await PasskeyFixture.handle(server))
            XCTAssertEqual(again.status, .ok, again.html)
            XCTAssertEqual(try PasskeyFixture.decode(PasskeySignInResponse.self, again).next, "/realms/demo/login/push")
            let stillWaiting = try await browser.get("/realms/demo/account")
            XCTAssertEqual(stillWaiting.status, .seeOther)

            // Off again (the default): the passkey alone signs in.
            try await PasskeyFixture.enable(server) { $0.secondStep = false }
            let plain = TestBrowser(client)
            used.signCount = 3
            let plainSignIn = try await PasskeyFixture.signIn(
                plain, used, csrf: try await PasskeyFixture.csrf(plain, fromLogin: true), userHandle: try await PasskeyFixture.handle(server)
            )
            XCTAssertEqual(try PasskeyFixture.decode(PasskeySignInResponse.self, plainSignIn).next, "/realms/demo/account")
        }
    }

    func testTheAccountPageListsRenamesAndRemovesPasskeys() async throws {
        try await TestServer.forEachEngine { server, client in
            try await PasskeyFixture.enable(server)
            let browser = TestBrowser(client)
            let registered = try await PasskeyFixture.register(browser, try PasskeyFixture.authenticator(), name: "Work laptop")
            XCTAssertEqual(registered.status, .created)
            let page = try await browser.get("/realms/demo/account")
            XCTAssertTrue(page.contains("Work laptop"), page.html)
            XCTAssertTrue(page.contains("data-passkey-register"))
            XCTAssertTrue(page.contains("this device only"))
            let rename = try XCTUnwrap(page.capture(#"action="(/realms/demo/account/passkeys/[^"]+/rename)""#))
            let renamed = try await browser.post(rename, ["csrf": page.field("csrf") ?? "", "name": "  Home\u{7} laptop  "])
            XCTAssertEqual(renamed.location, "/realms/demo/account?notice=passkey-renamed")
            let renamedPage = try await browser.get("/realms/demo/account")
            XCTAssertTrue(renamedPage.contains("Home laptop"))
            let remove = try XCTUnwrap(page.capture(#"action="(/realms/demo/account/passkeys/[^"]+/remove)""#))
            let forged = try await browser.post(remove, ["csrf": "wrong"])
            XCTAssertEqual(forged.status, .forbidden)
            let removed = try await browser.post(remove, ["csrf": page.field("csrf") ?? ""])
            XCTAssertEqual(removed.location, "/realms/demo/account?notice=passkey-removed")
            let afterRemoval = try await browser.get("/realms/demo/account")
            XCTAssertTrue(afterRemoval.contains("No passkey yet."))
            let events = try await server.runtime.audit.events(realm: "demo", limit: 20).map(\.type)
            XCTAssertTrue(events.contains(.passkeyRenamed) && events.contains(.passkeyRemoved), "\(events)")
        }
    }

    func testTheLastWayInStaysAndAPasskeyCountsAsOne() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            let service = server.runtime.passkeys.service
            try await PasskeyFixture.enable(server)
            try await ProviderLinkTests.addProviders(server)
            let social = try await users.signInWithProvider(
                realm: "demo", issuer: ProviderLinkTests.corp, subject: "p-1", details: .init(alias: "corp", email: nil, emailVerified: nil, name: nil)
            ).user
            let lone = try await users.unlinkProvider(realm: "demo", userId: social.id, issuer: ProviderLinkTests.corp, subject: "p-1")
            XCTAssertEqual(lone, .lastWayIn)
            let stored = Passkey(
                realm: "demo", credentialId: "cred-1", userId: social.id, publicKey: Base64URL.encode(try PasskeyFixture.authenticator().key.coseKey.encoded),
                algorithm: -7, signCount: 0, backupEligible: true, backedUp: true, userVerified: true, transports: [], aaguid: "00000000-0000-0000-0000-000000000000",
                attestationFormat: "none", attestationTrusted: false, name: "Phone", createdAt: server.clock.now(), lastUsedAt: nil, possiblyClonedAt: nil
            )
            let inserted = try await service.store.insert(stored)
            XCTAssertTrue(inserted)
            let unlinked = try await users.unlinkProvider(realm: "demo", userId: social.id, issuer: ProviderLinkTests.corp, subject: "p-1")
            XCTAssertEqual(unlinked, .unlinked, "the passkey is another way in")
            let removal = try await service.removeUnlessLastWayIn(realm: "demo", userId: social.id, credentialId: "cred-1")
            XCTAssertEqual(removal, .lastWayIn, "now the passkey is the only way in")
            let stranger = try await service.removeUnlessLastWayIn(realm: "demo", userId: "someone-else", credentialId: "cred-1")
            XCTAssertEqual(stranger, .notFound, "another user's passkey is not theirs to remove")

            let withPassword = try await users.createUser(realm: "demo", username: "gail", password: "gail-password-1")
            var own = stored
            (own.credentialId, own.userId) = ("cred-2", withPassword.id)
            let insertedOwn = try await service.store.insert(own)
            XCTAssertTrue(insertedOwn)
            let removed = try await service.removeUnlessLastWayIn(realm: "demo", userId: withPassword.id, credentialId: "cred-2")
            XCTAssertEqual(removed, .removed)
        }
    }

    func testDeletingAUserRemovesTheirPasskeys() async throws {
        try await TestServer.forEachEngine { server, client in
            try await PasskeyFixture.enable(server)
            _ = try await PasskeyFixture.register(TestBrowser(client), try PasskeyFixture.authenticator())
            let testUser = try await server.runtime.accounts.users.user(realm: "demo", username: "test")
            let user = try XCTUnwrap(testUser)
            let before = try await server.runtime.passkeys.service.passkeys(realm: "demo", userId: user.id)
            XCTAssertEqual(before.count, 1)
            _ = try await server.runtime.deleteUser(realm: "demo", username: "test")
            let after = try await server.runtime.passkeys.service.passkeys(realm: "demo", userId: user.id)
            XCTAssertEqual(after.count, 0)
        }
    }
}
