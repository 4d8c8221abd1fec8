// Tests: the broker's relay — a native app's session key gets a delegation through the browser's sign-in and
// consent, handed off at its registered return address, taken with the key and exchanged for tokens bound to it.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class RelayTests: XCTestCase {
    private static let returnURL = "https://app.example.com/broker"
    private static let jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    func testARelayHandsTheSessionKeyADelegationThatBuysTokensBoundToIt() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.registerBrokerApp()
            let sessionKey = try SigningKey.generate(.edDSA)
            let browser = TestBrowser(client)
            let nonce = "nonce-" + Base64URL.encode(SecureRandom.bytes(12))
            let consent = try await Self.relay(browser, key: sessionKey, nonce: nonce)
            XCTAssertEqual(consent.status, .ok)
            XCTAssertTrue(consent.contains("broker-app"), "the page names the app")
            XCTAssertTrue(consent.contains("for 30 days"), "and for how long")
            let answer = try await browser.post(
                "/realms/demo/protocol/openid-connect/auth/consent",
                ["csrf": consent.field("csrf") ?? "", "id": consent.field("id") ?? "", "decision": "allow"]
            )
            let location = try XCTUnwrap(answer.location)
            XCTAssertTrue(location.hasPrefix(Self.returnURL + "#code="), location)
            let fragment = Self.fragment(location)
            XCTAssertEqual(fragment["nonce"], nonce)
            let code = try XCTUnwrap(fragment["code"])

            let taken = try await client.take(server, code: code, nonce: nonce, key: sessionKey)
            XCTAssertEqual(taken.status, .ok, "\(taken.json)")
            XCTAssertEqual(taken.json["kind"]?.stringValue, "delegation")
            let delegation = try XCTUnwrap(taken.json["value"]?.stringValue)
            let keys = try await server.runtime.oauth.keys.publishedKeys(realm: "demo")
            let verified = try JWTVerifier.verify(delegation, policy: JWTVerificationPolicy(
                allowedAlgorithms: [.es256], keys: .set(keys), expectedType: "keyward-delegation+jwt", requiredClaims: ["exp", "sub", "jti", "cnf"],
                issuer: TestServer.publicURL + "/realms/demo", audience: "broker-app"
            ), now: server.clock.now())
            let user = try await XCTUnwrapAsync(try await server.runtime.accounts.users.user(realm: "demo", username: "test"))
            XCTAssertEqual(verified.claims["sub"]?.stringValue, user.id)
            XCTAssertEqual(verified.claims["cnf"]?.objectValue?["jwk"]?.objectValue, sessionKey.publicJWK.requiredMembers)
            let lifetime = (verified.claims["exp"]?.numberValue ?? 0) - (verified.claims["iat"]?.numberValue ?? 0)
            XCTAssertEqual(lifetime, 30 * 86400)

            let form = "grant_type=\(TestBrowser.encode(Self.jwtBearer))&assertion=\(delegation)&client_id=broker-app"
            let tokens = try await client.requestToken(body: form, proofs: [try server.tokenProof(sessionKey)])
            XCTAssertEqual(tokens.status, .ok, "\(tokens.json)")
            XCTAssertEqual(tokens.json["token_type"]?.stringValue, "DPoP")
            let access = try UnverifiedJWT(try XCTUnwrap(tokens.json["access_token"]?.stringValue)).claims
            XCTAssertEqual(access["sub"]?.stringValue, user.id)
            XCTAssertEqual(access["cnf"]?.objectValue?["jkt"]?.stringValue, try sessionKey.publicJWK.thumbprint())
            XCTAssertNil(tokens.json["scope"], "the person allowed the app to act for them, not any scope")
            XCTAssertEqual(taken.json["client_id"]?.stringValue, "broker-app")
            let events = try await server.runtime.audit.events(realm: "demo", userId: user.id, limit: 20)
            XCTAssertTrue(events.contains { $0.type == .delegationIssued && $0.clientId == "broker-app" }, "\(events.map(\.type))")

            let otherKey = try await client.requestToken(body: form, proofs: [try server.tokenProof(try SigningKey.generate(.es256))])
            XCTAssertEqual(otherKey.status, .badRequest)
            XCTAssertEqual(otherKey.json["reason"]?.stringValue, "delegation_key_mismatch")
            let noProof = try await client.requestToken(body: form, proofs: [])
            XCTAssertEqual(noProof.json["error"]?.stringValue, "invalid_dpop_proof")
            let otherClient = try await client.requestToken(
                body: form.replacingOccurrences(of: "client_id=broker-app", with: "client_id=push-device-client&client_secret=device-client-secret"),
                proofs: [try server.tokenProof(sessionKey)]
            )
            XCTAssertEqual(otherClient.json["reason"]?.stringValue, "delegation_invalid", "the delegation is for broker-app only")

            server.clock.advance(by: 30 * 86400 + 60)
            let expired = try await client.requestToken(body: form, proofs: [try server.tokenProof(sessionKey)])
            XCTAssertEqual(expired.json["error"]?.stringValue, "invalid_grant")
            XCTAssertEqual(expired.json["reason"]?.stringValue, "delegation_invalid")
        }
    }

    func testADisabledUsersDelegationBuysNothingAgain() async throws {
        try await TestServer.forEachEngine(engines: [.sqlite]) { server, client in
            try await server.registerBrokerApp()
            let sessionKey = try SigningKey.generate(.es256)
            let delegation = try await Self.delegation(server, client, key: sessionKey)
            _ = try await server.runtime.accounts.users.disable(realm: "demo", username: "test")
            _ = try await server.runtime.accounts.users.enable(realm: "demo", username: "test")
            let form = "grant_type=\(TestBrowser.encode(Self.jwtBearer))&assertion=\(delegation)&client_id=broker-app"
            let refused = try await client.requestToken(body: form, proofs: [try server.tokenProof(sessionKey)])
            XCTAssertEqual(refused.json["reason"]?.stringValue, "delegation_revoked", "disabling the user ended its app sessions")
        }
    }

    func testADelegationIsAnAppSessionTheAccountPageListsAndSigningOutEnds() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.registerBrokerApp()
            let sessionKey = try SigningKey.generate(.es256)
            let browser = TestBrowser(client)
            let consent = try await Self.relay(browser, key: sessionKey, nonce: "nonce-app-session-1")
            let answer = try await browser.post(
                "/realms/demo/protocol/openid-connect/auth/consent", ["csrf": consent.field("csrf") ?? "", "id": consent.field("id") ?? "", "decision": "allow"]
            )
            let code = try XCTUnwrap(Self.fragment(try XCTUnwrap(answer.location))["code"])
            let taken = try await client.take(server, code: code, nonce: "nonce-app-session-1", key: sessionKey)
            let delegation = try XCTUnwrap(taken.json["value"]?.stringValue)
            let sid = try XCTUnwrap(try UnverifiedJWT(delegation).claims["sid"]?.stringValue)
            let form = "grant_type=\(TestBrowser.encode(Self.jwtBearer))&assertion=\(delegation)&client_id=broker-app"
            let tokens = try await client.requestToken(body: form, proofs: [try server.tokenProof(sessionKey)])
            XCTAssertEqual(tokens.status, .ok, "\(tokens.json)")
            let access = try UnverifiedJWT(try XCTUnwrap(tokens.json["access_token"]?.stringValue)).claims
            XCTAssertEqual(access["sid"]?.stringValue, sid, "its tokens name the app session")

            let account = try await browser.get("/realms/demo/account")
            XCTAssertTrue(account.contains("Apps signed in to your account") && account.contains("broker-app"), "listed with the other apps")

            let logout = try await browser.post("/realms/demo/logout", ["csrf": account.field("csrf") ?? ""])
            XCTAssertEqual(logout.status, .seeOther)
            let ended = try await client.requestToken(body: form, proofs: [try server.tokenProof(sessionKey)])
            XCTAssertEqual(ended.status, .badRequest)
            XCTAssertEqual(ended.json["reason"]?.stringValue, "delegation_revoked", "signing out of the browser it came from ends it")
        }
    }

    func testAPersonLoopingTheRelayFillsTheirOwnShareAndLeavesNoSessionBehind() async throws {
        try await TestServer.forEachEngine(engines: [.sqlite]) { server, client in
            let redirects = try ClientRedirects(redirectURIs: [Self.returnURL], postLogoutRedirectURIs: [], firstParty: true, requirePAR: false, broker: true)
            _ = try await server.runtime.oauth.clients.createPublicClient(realm: "demo", clientId: "broker-app", redirects: redirects)
            let browser = TestBrowser(client)
            let key = try SigningKey.generate(.es256)
            var last = try await Self.relay(browser, key: key, nonce: "nonce-loop-000000")
            for round in 1...30 {
                last = try await browser.get(Self.path(try Self.parameters(key: key, nonce: "nonce-loop-\(String(format: "%06d", round))")))
            }
            let fragment = Self.fragment(try XCTUnwrap(last.location))
            XCTAssertEqual(fragment["error"], "temporarily_unavailable", "the 31st relay in a minute")
            XCTAssertNil(fragment["code"])
            let user = try await XCTUnwrapAsync(try await server.runtime.accounts.users.user(realm: "demo", username: "test"))
            let sessions = try await server.runtime.openID.families.liveFamilies(realm: "demo", userId: user.id, now: server.clock.now())
            XCTAssertEqual(sessions.count, 30, "an app session for each delegation issued, none for the refused one")
            server.clock.advance(by: 61)
            let later = try await browser.get(Self.path(try Self.parameters(key: key, nonce: "nonce-loop-later-1")))
            XCTAssertTrue(later.location?.hasPrefix(Self.returnURL + "#code=") ?? false, "the next minute")
        }
    }

    func testARefusedConsentGoesBackWithTheNonceAndNoCode() async throws {
        try await TestServer.forEachEngine(engines: [.sqlite]) { server, client in
            try await server.registerBrokerApp()
            let browser = TestBrowser(client)
            let consent = try await Self.relay(browser, key: try SigningKey.generate(.es256), nonce: "nonce-refused-0001")
            let answer = try await browser.post(
                "/realms/demo/protocol/openid-connect/auth/consent",
                ["csrf": consent.field("csrf") ?? "", "id": consent.field("id") ?? "", "decision": "deny"]
            )
            let fragment = Self.fragment(try XCTUnwrap(answer.location))
            XCTAssertEqual(fragment["error"], "access_denied")
            XCTAssertEqual(fragment["nonce"], "nonce-refused-0001")
            XCTAssertNil(fragment["code"])
        }
    }

    func testOnlyAFirstPartyAppWithAClaimedLinkIsSparedTheConsent() async throws {
        try await TestServer.forEachEngine(engines: [.sqlite]) { server, client in
            for (clientId, returnURL, asks) in [("claimed", Self.returnURL, false), ("scheme", "com.example.app:/broker", true)] {
                let redirects = try ClientRedirects(redirectURIs: [returnURL], postLogoutRedirectURIs: [], firstParty: true, requirePAR: false, broker: true)
                _ = try await server.runtime.oauth.clients.createPublicClient(realm: "demo", clientId: clientId, redirects: redirects)
                let browser = TestBrowser(client)
                let page = try await Self.relay(browser, key: try SigningKey.generate(.es256), nonce: "nonce-first-party-1", clientId: clientId, returnURL: returnURL)
                if asks {
                    XCTAssertEqual(page.status, .ok, "a custom scheme could be another app's: the person is asked")
                    XCTAssertTrue(page.contains("for 30 days"))
                } else {
                    XCTAssertEqual(page.status, .seeOther)
                    XCTAssertTrue(page.location?.hasPrefix(returnURL + "#code=") ?? false, "\(page.location ?? "")")
                }
            }
        }
    }

    func testABadRelayRequestIsAPageAndNeverARedirect() async throws {
        try await TestServer.forEachEngine(engines: [.sqlite]) { server, client in
            try await server.registerBrokerApp()
            _ = try await server.runtime.oauth.clients.createPublicClient(
                realm: "demo", clientId: "not-broker", redirects: try ClientRedirects(redirectURIs: [Self.returnURL], postLogoutRedirectURIs: [], firstParty: false, requirePAR: false)
            )
            let key = try SigningKey.generate(.es256)
            let good = try Self.parameters(key: key, nonce: "nonce-bad-request-1")
            let rsa = #"{"kty":"RSA","n":"AQAB","e":"AQAB"}"#
            let withPrivate = #"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"}"#
            let p384 = try SigningKey.generate(.es384).publicJWK.requiredMembers
            let cases: [(String, [String: String])] = [
                ("no client", good.filter { $0.key != "client_id" }),
                ("unknown client", good.merging(["client_id": "nobody"]) { $1 }),
                ("not a broker app", good.merging(["client_id": "not-broker"]) { $1 }),
                ("unregistered return", good.merging(["return": "https://evil.example/broker"]) { $1 }),
                ("trailing slash", good.merging(["return": Self.returnURL + "/"]) { $1 }),
                ("case", good.merging(["return": "https://APP.example.com/broker"]) { $1 }),
                ("query", good.merging(["return": Self.returnURL + "?x=1"]) { $1 }),
                ("no return", good.filter { $0.key != "return" }),
                ("short nonce", good.merging(["nonce": "short"]) { $1 }),
                ("nonce with a space", good.merging(["nonce": "nonce with spaces!"]) { $1 }),
                ("no key", good.filter { $0.key != "publicKey" }),
                ("key not base64url", good.merging(["publicKey": "***"]) { $1 }),
                ("key not JSON", good.merging(["publicKey": Base64URL.encode(Array("not json".utf8))]) { $1 }),
                ("RSA key", good.merging(["publicKey": Base64URL.encode(Array(rsa.utf8))]) { $1 }),
                ("private key", good.merging(["publicKey": Base64URL.encode(Array(withPrivate.utf8))]) { $1 }),
                ("P-384 key", good.merging(["publicKey": Base64URL.encode(StrictJSON.serialize(p384))]) { $1 }),
                ("long key", good.merging(["publicKey": String(repeating: "A", count: 600)]) { $1 }),
            ]
            for (why, parameters) in cases {
                let page = try await TestBrowser(client).get(Self.path(parameters))
                XCTAssertEqual(page.status, .badRequest, why)
                XCTAssertNil(page.location, why)
                XCTAssertTrue(page.contains("cannot be completed"), why)
            }
            let twice = try await TestBrowser(client).get(Self.path(good) + "&nonce=again-and-again-1")
            XCTAssertEqual(twice.status, .badRequest, "a parameter twice")
        }
    }

    // MARK: - Helpers

    static func parameters(key: SigningKey, nonce: String, clientId: String = "broker-app", returnURL: String = returnURL) throws -> [String: String] {
        [
            "client_id": clientId, "nonce": nonce, "return": returnURL,
            "publicKey": Base64URL.encode(StrictJSON.serialize(try key.publicJWK.requiredMembers)),
        ]
    }

    static func path(_ parameters: [String: String]) -> String {
        "/realms/demo/auth/relay?" + parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\(TestBrowser.encode($0.value))" }.joined(separator: "&")
    }

    /// Opens the relay and signs in when asked; returns the page it stops at (the consent) or the redirect to the app.
    static func relay(
        _ browser: TestBrowser, key: SigningKey, nonce: String, clientId: String = "broker-app", returnURL: String = returnURL
    ) async throws -> TestBrowser.Page {
        var page = try await browser.get(path(try parameters(key: key, nonce: nonce, clientId: clientId, returnURL: returnURL)))
        for _ in 0..<6 {
            guard page.status == .seeOther, let location = page.location, location.hasPrefix("/") else { return page }
            if location.hasPrefix("/realms/demo/login") {
                let login = try await browser.get(location)
                page = try await browser.post("/realms/demo/login", ["csrf": login.field("csrf") ?? "", "username": "test", "password": "test"])
            } else {
                page = try await browser.get(location)
            }
        }
        return page
    }

    /// A delegation for `key`, through the relay and the take.
    static func delegation(_ server: TestServer, _ client: any TestClientProtocol, key: SigningKey) async throws -> String {
        let browser = TestBrowser(client)
        let consent = try await relay(browser, key: key, nonce: "nonce-delegation-1")
        let answer = try await browser.post(
            "/realms/demo/protocol/openid-connect/auth/consent", ["csrf": consent.field("csrf") ?? "", "id": consent.field("id") ?? "", "decision": "allow"]
        )
        let code = try XCTUnwrap(fragment(try XCTUnwrap(answer.location))["code"])
        let taken = try await client.take(server, code: code, nonce: "nonce-delegation-1", key: key)
        return try XCTUnwrap(taken.json["value"]?.stringValue)
    }

    static func fragment(_ location: String) -> [String: String] {
        let text = location.split(separator: "#", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
        var values: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            if parts.count == 2 { values[parts[0]] = parts[1] }
        }
        return values
    }
}

final class BrokerSettingsTests: XCTestCase {
    func testARealmsSettingsShortenTheDelegationAndTheHandoffAndTheConsentSaysSo() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.registerBrokerApp()
            var settings = try await server.runtime.broker.settings.settings(realm: "demo")
            XCTAssertEqual(settings, BrokerSettings(), "the defaults until a realm saves its own")
            try settings.apply("delegationLifetimeDays", "7")
            try settings.apply("handoffLifetimeSeconds", "10")
            try await server.runtime.broker.settings.save(settings, realm: "demo")

            let key = try SigningKey.generate(.es256)
            let browser = TestBrowser(client)
            let consent = try await RelayTests.relay(browser, key: key, nonce: "nonce-settings-0001")
            XCTAssertTrue(consent.contains("for 7 days"), "the consent says the realm's lifetime")
            // Changed while the page is shown: what was shown is what is issued.
            try settings.apply("delegationLifetimeDays", "30")
            try await server.runtime.broker.settings.save(settings, realm: "demo")
            let answer = try await browser.post(
                "/realms/demo/protocol/openid-connect/auth/consent", ["csrf": consent.field("csrf") ?? "", "id": consent.field("id") ?? "", "decision": "allow"]
            )
            let code = try XCTUnwrap(RelayTests.fragment(try XCTUnwrap(answer.location))["code"])
            let taken = try await client.take(server, code: code, nonce: "nonce-settings-0001", key: key)
            let claims = try UnverifiedJWT(try XCTUnwrap(taken.json["value"]?.stringValue)).claims
            XCTAssertEqual((claims["exp"]?.numberValue ?? 0) - (claims["iat"]?.numberValue ?? 0), 7 * 86400)

        }
    }

    func testASettingOutOfItsRangeIsRefusedWithItsName() throws {
        var settings = BrokerSettings()
        for (key, value) in [("delegationLifetimeDays", "31"), ("delegationLifetimeDays", "0"), ("handoffLifetimeSeconds", "301"), ("handoffLifetimeSeconds", "x")] {
            XCTAssertThrowsError(try settings.apply(key, value)) { error in
                XCTAssertTrue("\(error)".contains(key), "\(error)")
            }
        }
        XCTAssertThrowsError(try settings.apply("unknown", "1")) { error in
            XCTAssertTrue("\(error)".contains("one of delegationLifetimeDays, handoffLifetimeSeconds"), "\(error)")
        }
        XCTAssertEqual(settings, BrokerSettings(), "nothing changed")
    }

    func testAHandoffWaitsAsLongAsTheRealmSays() async throws {
        try await TestServer.forEachEngine(engines: [.sqlite]) { server, client in
            try await server.registerBrokerApp()
            var settings = BrokerSettings()
            try settings.apply("handoffLifetimeSeconds", "10")
            try await server.runtime.broker.settings.save(settings, realm: "demo")
            let key = try SigningKey.generate(.es256)
            let browser = TestBrowser(client)
            let consent = try await RelayTests.relay(browser, key: key, nonce: "nonce-settings-0003")
            let answer = try await browser.post(
                "/realms/demo/protocol/openid-connect/auth/consent", ["csrf": consent.field("csrf") ?? "", "id": consent.field("id") ?? "", "decision": "allow"]
            )
            let code = try XCTUnwrap(RelayTests.fragment(try XCTUnwrap(answer.location))["code"])
            server.clock.advance(by: 11)
            let taken = try await client.take(server, code: code, nonce: "nonce-settings-0003", key: key)
            XCTAssertEqual(taken.json["error"]?.stringValue, "handoff_invalid", "past the realm's 10 s")
        }
    }
}
