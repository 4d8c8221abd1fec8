// Tests: the passkey endpoints end to end through the in-process server, on both engines: turned off, registered
// from a signed-in session, used to sign in without a username or after one, and every hostile answer refused
// with its reason, leaving no session behind.
import AttestationTestSupport
import Foundation
import HTTPTypes
import KeywardCBOR
import KeywardJOSE
@testable import KeywardServer
import KeywardWire
import XCTest

final class PasskeyRouteTests: XCTestCase {
    func testTheEndpointsAnswerPasskeysDisabledUntilTheRealmTurnsThemOn() async throws {
        try await TestServer.forEachEngine { server, client in
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            let csrf = try await PasskeyFixture.csrf(browser)
            let off = try await browser.postJSON(PasskeyFixture.base + "/registration/options", "{}", headers: PasskeyFixture.headers(csrf))
            XCTAssertEqual(off.status, .forbidden)
            XCTAssertEqual(PasskeyFixture.error(off), "passkeys_disabled")
            try await PasskeyFixture.enable(server)
            let on = try await browser.postJSON(PasskeyFixture.base + "/registration/options", "{}", headers: PasskeyFixture.headers(csrf))
            XCTAssertEqual(on.status, .ok, on.html)
            let options = try PasskeyFixture.decode(PublicKeyCredentialCreationOptionsJSON.self, on)
            XCTAssertEqual(options.rp.id, "keyward.test")
            XCTAssertEqual(options.authenticatorSelection.residentKey, "required")
            XCTAssertEqual(options.authenticatorSelection.userVerification, "required")
            XCTAssertEqual(options.pubKeyCredParams.map(\.alg), [-7, -8, -257])
            XCTAssertEqual(options.attestation, "none")
            XCTAssertEqual(options.user.name, "test")
        }
    }

    func testRegisterThenSignInWithoutAUsername() async throws {
        try await TestServer.forEachEngine { server, client in
            try await PasskeyFixture.enable(server)
            // One signed-in browser adds them all: once the account has a passkey, a password sign-in asks for it.
            let owner = TestBrowser(client)
            for algorithm in [-7, -8, -257] {
                let passkey = try PasskeyFixture.authenticator(algorithm: algorithm)
                let registered = try await PasskeyFixture.register(owner, passkey, name: "Laptop \(algorithm)", signIn: algorithm == -7)
                XCTAssertEqual(registered.status, .created, registered.html)
                let body = try PasskeyFixture.decode(RegisteredPasskey.self, registered)
                XCTAssertEqual(body.name, "Laptop \(algorithm)")
                XCTAssertEqual(body.attestation, "none")

                let browser = TestBrowser(client)
                let csrf = try await PasskeyFixture.csrf(browser, fromLogin: true)
                let signedIn = try await PasskeyFixture.signIn(browser, passkey, csrf: csrf, userHandle: try await PasskeyFixture.handle(server))
                XCTAssertEqual(signedIn.status, .ok, signedIn.html)
                let answer = try PasskeyFixture.decode(PasskeySignInResponse.self, signedIn)
                XCTAssertEqual(answer.next, "/realms/demo/account")
                XCTAssertEqual(answer.amr, ["hwk", "user"])
                let session = try await browser.get("/realms/demo/v1/auth/session")
                XCTAssertEqual(session.status, .ok, session.html)
                XCTAssertTrue(session.html.contains(#""amr":["hwk","user"]"#), session.html)
            }
            let user = try await server.runtime.accounts.users.user(realm: "demo", username: "test")
            let stored = try await server.runtime.passkeys.service.passkeys(realm: "demo", userId: try XCTUnwrap(user).id)
            XCTAssertEqual(stored.count, 3)
            XCTAssertTrue(stored.allSatisfy { $0.lastUsedAt != nil && $0.transports == ["internal"] })
        }
    }

    /// A native app holds no cookie before its first call: the options give it a sign-in state and its CSRF token.
    func testACallerWithoutACookieGetsASignInStateWithTheOptions() async throws {
        try await TestServer.forEachEngine { server, client in
            try await PasskeyFixture.enable(server)
            let passkey = try PasskeyFixture.authenticator()
            _ = try await PasskeyFixture.register(TestBrowser(client), passkey)
            let app = TestBrowser(client)
            let first = try await app.postJSON(PasskeyFixture.base + "/authentication/options", "{}")
            XCTAssertEqual(first.status, .ok, first.html)
            let csrf = try XCTUnwrap(first.headers[HTTPField.Name("X-CSRF-Token")!])
            XCTAssertNotNil(app.sessionCookie, "the answer set the sign-in state's cookie")
            let options = try PasskeyFixture.decode(PublicKeyCredentialRequestOptionsJSON.self, first)
            let handle = try await PasskeyFixture.handle(server)
            let signedIn = try await PasskeyFixture.answer(app, passkey, challenge: options.challenge, csrf: csrf, userHandle: handle)
            XCTAssertEqual(signedIn.status, .ok, signedIn.html)
            // Holding a state, the caller must show its token again.
            let again = try await app.postJSON(PasskeyFixture.base + "/authentication/options", "{}")
            XCTAssertEqual(PasskeyFixture.error(again), "csrf_mismatch")
        }
    }

    /// Options for a username look the same whoever it names (review finding 3: a decoy id told itself apart from a
    /// real list): no credential is named, and the challenge binds the account, so only its own passkey signs in.
    func testOptionsForAUsernameNameNoCredentialAndBindTheAccount() async throws {
        try await TestServer.forEachEngine { server, client in
            try await PasskeyFixture.enable(server)
            let passkey = try PasskeyFixture.authenticator()
            let owner = TestBrowser(client)
            _ = try await PasskeyFixture.register(owner, passkey)
            _ = try await server.runtime.accounts.users.createUser(realm: "demo", username: "other", password: "other-password-1")
            let other = try PasskeyFixture.authenticator()
            let otherBrowser = TestBrowser(client)
            _ = try await otherBrowser.signIn(username: "other", password: "other-password-1")
            _ = try await PasskeyFixture.register(otherBrowser, other, signIn: false)

            let browser = TestBrowser(client)
            let csrf = try await PasskeyFixture.csrf(browser, fromLogin: true)
            for username in ["test", "nobody"] {
                let answer = try await browser.postJSON(PasskeyFixture.base + "/authentication/options", #"{"username":"\#(username)"}"#, headers: PasskeyFixture.headers(csrf))
                let options = try PasskeyFixture.decode(PublicKeyCredentialRequestOptionsJSON.self, answer)
                XCTAssertEqual(options.allowCredentials, [], "\(username): the options name no credential")
                XCTAssertEqual(options.userVerification, "required")
            }
            // The username binds the account: another account's passkey is refused, the account's own signs in, and
            // with the username given the userHandle may be left out.
            let mixed = try await PasskeyFixture.signIn(browser, other, csrf: csrf, username: "test", userHandle: nil)
            XCTAssertEqual(PasskeyFixture.reason(mixed), "webauthn_user_handle_mismatch", mixed.html)
            let unknown = try await PasskeyFixture.signIn(browser, passkey, csrf: csrf, username: "nobody", userHandle: nil)
            XCTAssertEqual(PasskeyFixture.reason(unknown), "webauthn_user_handle_mismatch", unknown.html)
            let signedIn = try await PasskeyFixture.signIn(browser, passkey, csrf: csrf, username: "test", userHandle: nil)
            XCTAssertEqual(signedIn.status, .ok, signedIn.html)
        }
    }

    func testHostileSignInsAreRefusedWithTheirReasonAndSignNobodyIn() async throws {
        try await TestServer.forEachEngine { server, client in
            try await PasskeyFixture.enable(server)
            var passkey = try PasskeyFixture.authenticator()
            _ = try await PasskeyFixture.register(TestBrowser(client), passkey)
            let handle = try await PasskeyFixture.handle(server)

            func refused(_ reason: String, file: StaticString = #filePath, line: UInt = #line, _ attempt: (TestBrowser, String) async throws -> TestBrowser.Page) async throws {
                let browser = TestBrowser(client)
                let csrf = try await PasskeyFixture.csrf(browser, fromLogin: true)
                let before = browser.sessionCookie
                let page = try await attempt(browser, csrf)
                XCTAssertEqual(page.status, .badRequest, page.html, file: file, line: line)
                XCTAssertEqual(PasskeyFixture.error(page), "passkey_refused", file: file, line: line)
                XCTAssertEqual(PasskeyFixture.reason(page), reason, page.html, file: file, line: line)
                XCTAssertEqual(browser.sessionCookie, before, "a refusal sets no session", file: file, line: line)
            }

            var elsewhere = passkey
            elsewhere.origin = "https://evil.test"
            try await refused("webauthn_origin_not_allowed") { b, c in try await PasskeyFixture.signIn(b, elsewhere, csrf: c, userHandle: handle) }
            var otherRP = passkey
            otherRP.rpID = "evil.test"
            try await refused("webauthn_rp_id_mismatch") { b, c in try await PasskeyFixture.signIn(b, otherRP, csrf: c, userHandle: handle) }
            var absent = passkey
            absent.flags = 0x04
            try await refused("webauthn_user_not_present") { b, c in try await PasskeyFixture.signIn(b, absent, csrf: c, userHandle: handle) }
            var unverified = passkey
            unverified.flags = 0x01
            try await refused("webauthn_user_not_verified") { b, c in try await PasskeyFixture.signIn(b, unverified, csrf: c, userHandle: handle) }
            let stranger = try PasskeyFixture.authenticator()
            try await refused("webauthn_unknown_credential") { b, c in try await PasskeyFixture.signIn(b, stranger, csrf: c, userHandle: handle) }
            try await refused("webauthn_user_handle_mismatch") { b, c in
                try await PasskeyFixture.signIn(b, passkey, csrf: c, userHandle: Base64URL.encode(Array("someone-else".utf8)))
            }
            try await refused("webauthn_user_handle_mismatch") { b, c in try await PasskeyFixture.signIn(b, passkey, csrf: c, userHandle: nil) }
            try await refused("webauthn_signature_invalid") { b, c in
                try await PasskeyFixture.signIn(b, passkey, csrf: c, userHandle: handle) { response in
                    var signature = try! Base64URL.decode(response.response.signature)
                    signature[signature.count - 2] ^= 1
                    response.response.signature = Base64URL.encode(signature)
                }
            }
            try await refused("webauthn_malformed") { b, c in
                try await PasskeyFixture.signIn(b, passkey, csrf: c, userHandle: handle) { $0.response.authenticatorData = "not base64url!" }
            }
            try await refused("webauthn_id_mismatch") { b, c in
                try await PasskeyFixture.signIn(b, passkey, csrf: c, userHandle: handle) { $0.rawId = "AAAA" }
            }
            try await refused("webauthn_challenge_invalid") { b, c in
                try await PasskeyFixture.answer(b, passkey, challenge: Base64URL.encode(Array(repeating: 7, count: 64)), csrf: c, userHandle: handle)
            }

            // A challenge issued to one browser, answered from another.
            let first = TestBrowser(client)
            let firstCSRF = try await PasskeyFixture.csrf(first, fromLogin: true)
            let options = try PasskeyFixture.decode(
                PublicKeyCredentialRequestOptionsJSON.self,
                try await first.postJSON(PasskeyFixture.base + "/authentication/options", "{}", headers: PasskeyFixture.headers(firstCSRF))
            )
            try await refused("webauthn_challenge_other_session") { b, c in
                try await PasskeyFixture.answer(b, passkey, challenge: options.challenge, csrf: c, userHandle: handle)
            }

            // A replayed answer from the same browser state: the challenge was spent by the first.
            let service = server.runtime.passkeys.service
            let replayOptions = try await service.authenticationOptions(realm: "demo", binding: "p:replay", ceremony: .signIn, userId: nil, username: nil)
            passkey.signCount = 1
            let (clientData, authData, signature) = try passkey.assertion(challenge: try Base64URL.decode(replayOptions.challenge))
            let response = AuthenticationResponseJSON(
                id: Base64URL.encode(passkey.credentialID),
                response: .init(
                    clientDataJSON: Base64URL.encode(clientData), authenticatorData: Base64URL.encode(authData), signature: Base64URL.encode(signature),
                    userHandle: handle
                )
            )
            _ = try await service.authenticate(realm: "demo", binding: "p:replay", ceremony: .signIn, response: response)
            do {
                _ = try await service.authenticate(realm: "demo", binding: "p:replay", ceremony: .signIn, response: response)
                XCTFail("a replayed answer signed in")
            } catch let refusal as PasskeyRefusal {
                // Its counter (1, not above the stored 1) does not mark the passkey: the spent challenge refuses it first.
                XCTAssertEqual(refusal.reason, PasskeyRefusal.challengeUsed, refusal.description)
            }
            let owner = try await server.runtime.accounts.users.user(realm: "demo", username: "test")
            let kept = try await service.passkeys(realm: "demo", userId: try XCTUnwrap(owner).id)
            XCTAssertNil(kept.first?.possiblyClonedAt, "a replay does not suspend the passkey")
        }
    }

    func testACounterThatGoesBackSuspendsThePasskeyAndIsAudited() async throws {
        try await TestServer.forEachEngine { server, client in
            try await PasskeyFixture.enable(server)
            var passkey = try PasskeyFixture.authenticator()
            _ = try await PasskeyFixture.register(TestBrowser(client), passkey)
            let handle = try await PasskeyFixture.handle(server)
            passkey.signCount = 5
            let browser = TestBrowser(client)
            let first = try await PasskeyFixture.signIn(browser, passkey, csrf: try await PasskeyFixture.csrf(browser, fromLogin: true), userHandle: handle)
            XCTAssertEqual(first.status, .ok)

            passkey.signCount = 5
            let clone = TestBrowser(client)
            let cloned = try await PasskeyFixture.signIn(clone, passkey, csrf: try await PasskeyFixture.csrf(clone, fromLogin: true), userHandle: handle)
            XCTAssertEqual(PasskeyFixture.reason(cloned), "webauthn_counter_not_increasing")
            passkey.signCount = 9
            let later = TestBrowser(client)
            let suspended = try await PasskeyFixture.signIn(later, passkey, csrf: try await PasskeyFixture.csrf(later, fromLogin: true), userHandle: handle)
            XCTAssertEqual(PasskeyFixture.reason(suspended), "webauthn_credential_suspended")
            let events = try await server.runtime.audit.events(realm: "demo", limit: 50).map(\.type)
            XCTAssertTrue(events.contains(.passkeyPossiblyCloned), "\(events)")
            XCTAssertTrue(events.contains(.passkeyRegistered), "\(events)")
        }
    }

    /// A counter that goes back on a synced passkey (each device of the provider may count on its own), or on the
    /// account's last way in, is refused and audited but does not suspend the passkey (review finding 2: two answers
    /// arriving out of order could lock a person out for good).
    func testACounterThatGoesBackNeverSuspendsASyncedPasskeyOrTheLastWayIn() async throws {
        try await TestServer.forEachEngine { server, client in
            try await PasskeyFixture.enable(server)
            let service = server.runtime.passkeys.service
            var synced = try PasskeyFixture.authenticator()
            var deviceBound = try PasskeyFixture.authenticator()
            // Two accounts without a password, each with one passkey: the synced one, and a device-bound last way in
            // (their provider is not configured in the realm, so it signs nobody in).
            var handles: [String] = []
            for (index, authenticator) in [synced, deviceBound].enumerated() {
                let user = try await server.runtime.accounts.users.createExternalUser(
                    realm: "demo", username: "lone-\(index)", kind: .provider, issuer: "https://idp.example.test", subject: "lone-\(index)"
                )
                handles.append(Base64URL.encode(Array(user.id.utf8)))
                let stored = Passkey(
                    realm: "demo", credentialId: Base64URL.encode(authenticator.credentialID), userId: user.id,
                    publicKey: Base64URL.encode(authenticator.key.coseKey.encoded), algorithm: -7, signCount: 5, backupEligible: index == 0,
                    backedUp: index == 0, userVerified: true, transports: [], aaguid: "00000000-0000-0000-0000-000000000000", attestationFormat: "none",
                    attestationTrusted: false, name: "key \(index)", createdAt: server.clock.now(), lastUsedAt: nil, possiblyClonedAt: nil
                )
                let inserted = try await service.store.insert(stored)
                XCTAssertTrue(inserted)
            }
            synced.signCount = 3
            synced.flags = 0x05 | 0x18
            let browser = TestBrowser(client)
            let refused = try await PasskeyFixture.signIn(browser, synced, csrf: try await PasskeyFixture.csrf(browser, fromLogin: true), userHandle: handles[0])
            XCTAssertEqual(PasskeyFixture.reason(refused), "webauthn_counter_not_increasing")
            deviceBound.signCount = 4
            deviceBound.flags = 0x05
            let second = TestBrowser(client)
            let alsoRefused = try await PasskeyFixture.signIn(second, deviceBound, csrf: try await PasskeyFixture.csrf(second, fromLogin: true), userHandle: handles[1])
            XCTAssertEqual(PasskeyFixture.reason(alsoRefused), "webauthn_counter_not_increasing")
            for index in 0..<2 {
                let user = try await server.runtime.accounts.users.user(realm: "demo", username: "lone-\(index)")
                let kept = try await service.passkeys(realm: "demo", userId: try XCTUnwrap(user).id)
                XCTAssertNil(kept.first?.possiblyClonedAt, "lone-\(index)'s passkey was suspended")
            }
            let events = try await server.runtime.audit.events(realm: "demo", limit: 20).filter { $0.type == .passkeyPossiblyCloned }
            XCTAssertEqual(events.count, 2, "each refusal is audited")
            XCTAssertTrue(events.allSatisfy { $0.detailsJSON.contains(#""suspended":"false""#) }, "\(events.map(\.detailsJSON))")
        }
    }

    /// A COSE key with nested items registered but could never be read back (review finding 6): every sign-in was then
    /// answered 503. The registration refuses what the stored-key reader refuses.
    func testAKeyTheStoredKeyReaderRefusesIsRefusedAtRegistration() async throws {
        try await TestServer.forEachEngine { server, client in
            try await PasskeyFixture.enable(server)
            var passkey = try PasskeyFixture.authenticator()
            var entries = passkey.key.coseKey.mapEntries!
            entries.append(CBORMapEntry(.integer(-70000), .array([.array([.integer(1)])])))
            passkey.coseKey = .map(entries)
            let answer = try await PasskeyFixture.register(TestBrowser(client), passkey)
            XCTAssertEqual(answer.status, .badRequest, answer.html)
            XCTAssertEqual(PasskeyFixture.reason(answer), "webauthn_malformed")
        }
    }

    func testRegistrationNeedsARecentSignInItsCSRFTokenAndItsOwnChallenge() async throws {
        try await TestServer.forEachEngine { server, client in
            try await PasskeyFixture.enable(server)
            let browser = TestBrowser(client)
            let stranger = try await browser.postJSON(PasskeyFixture.base + "/registration/options", "{}")
            XCTAssertEqual(stranger.status, .unauthorized)
            XCTAssertEqual(PasskeyFixture.error(stranger), "not_signed_in")
            _ = try await browser.signIn()
            let noToken = try await browser.postJSON(PasskeyFixture.base + "/registration/options", "{}")
            XCTAssertEqual(PasskeyFixture.error(noToken), "csrf_mismatch")
            let csrf = try await PasskeyFixture.csrf(browser)
            let form = try await browser.request(PasskeyFixture.base + "/registration/options", method: .post, headers: PasskeyFixture.headers(csrf))
            XCTAssertEqual(form.status, .ok, "options read no body")
            server.clock.advance(by: BrowserSession.recentSignIn + 1)
            let stale = try await browser.postJSON(PasskeyFixture.base + "/registration/options", "{}", headers: PasskeyFixture.headers(csrf))
            XCTAssertEqual(PasskeyFixture.error(stale), "recent_sign_in_required")

            // A registration answering another account's challenge.
            let passkey = try PasskeyFixture.authenticator()
            let owner = TestBrowser(client)
            let registered = try await PasskeyFixture.register(owner, passkey)
            XCTAssertEqual(registered.status, .created)
            let again = try await PasskeyFixture.register(owner, passkey, signIn: false)
            XCTAssertEqual(PasskeyFixture.reason(again), "webauthn_credential_exists")
        }
    }
}
