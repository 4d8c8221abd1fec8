// Tests: an app's session after sign-in: userinfo, revocation, and ending it with the browser session it came from.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
import NIOCore
@testable import KeywardServer
import XCTest

final class AppSessionTests: XCTestCase {
    static let userInfoURL = TestServer.publicURL + "/realms/demo/protocol/openid-connect/userinfo"

    /// Signs in through `browser` and redeems the code, with a proof by `key` when one is given.
    private static func signIn(
        _ server: TestServer, _ client: any TestClientProtocol, _ app: TestApp, browser: TestBrowser, key: SigningKey? = nil
    ) async throws -> JSONObject {
        let answer = try await app.authorize(browser)
        let code = try XCTUnwrap(answer.parameter("code"), "\(answer)")
        let issued = try await client.requestToken(body: app.tokenForm(code: code), proofs: try key.map { [try server.tokenProof($0)] } ?? [])
        XCTAssertEqual(issued.status, .ok, "\(issued.json)")
        return issued.json
    }

    private static func userInfo(
        _ client: any TestClientProtocol, authorization: String, proof: String? = nil, method: HTTPRequest.Method = .get
    ) async throws -> (status: HTTPResponse.Status, json: JSONObject, headers: HTTPFields) {
        var headers: HTTPFields = [.authorization: authorization]
        if let proof { headers[HTTPField.Name("DPoP")!] = proof }
        return try await client.execute(uri: "/realms/demo/protocol/openid-connect/userinfo", method: method, headers: headers) { response in
            (response.status, (try? StrictJSON.parseObject(response.body.readableBytesView)) ?? [:], response.headers)
        }
    }

    private static func revoke(_ client: any TestClientProtocol, token: String, clientId: String) async throws -> HTTPResponse.Status {
        try await client.execute(
            uri: "/realms/demo/protocol/openid-connect/revoke", method: .post, headers: .form(),
            body: ByteBuffer(string: "token=\(TestBrowser.encode(token))&client_id=\(clientId)")
        ) { $0.status }
    }

    func testUserInfoAnswersForALiveAppSessionWithTheSchemeItsTokenNeeds() async throws {
        try await TestServer.forEachEngine { server, client in
            var app = try await server.registerApp(scope: "profile")
            app.scope = "openid profile"
            let key = try SigningKey.generate(.es256)
            let bound = try await Self.signIn(server, client, app, browser: TestBrowser(client), key: key)
            let token = try XCTUnwrap(bound.stringMember("access_token"))
            let proof = try server.resourceProof(key, token: token, url: Self.userInfoURL)
            let info = try await Self.userInfo(client, authorization: "DPoP " + token, proof: proof)
            XCTAssertEqual(info.status, .ok, "\(info.json)")
            XCTAssertEqual(info.json["preferred_username"]?.stringValue, "test")
            let user = try await XCTUnwrapAsync(try await server.runtime.accounts.users.user(realm: "demo", username: "test"))
            XCTAssertEqual(info.json["sub"]?.stringValue, user.id)
            let posted = try await Self.userInfo(
                client, authorization: "DPoP " + token, proof: try server.resourceProof(key, token: token, url: Self.userInfoURL, method: "POST"), method: .post
            )
            XCTAssertEqual(posted.status, .ok)
            let boundAsBearer = try await Self.userInfo(client, authorization: "Bearer " + token)
            XCTAssertEqual(boundAsBearer.status, .unauthorized, "a DPoP-bound token is not a bearer token (RFC 9449 §7.1)")
            let noProof = try await Self.userInfo(client, authorization: "DPoP " + token)
            XCTAssertEqual(noProof.status, .unauthorized)

            let unbound = try await Self.signIn(server, client, app, browser: TestBrowser(client))
            let bearer = try XCTUnwrap(unbound.stringMember("access_token"))
            let value1 = try await Self.userInfo(client, authorization: "Bearer " + bearer).status
            XCTAssertEqual(value1, .ok)

            // A token not issued for OpenID Connect.
            let service = try await client.demoToken(server, key: key)
            let notOIDC = try await Self.userInfo(client, authorization: "DPoP " + service, proof: try server.resourceProof(key, token: service, url: Self.userInfoURL))
            XCTAssertEqual(notOIDC.status, .forbidden)
            XCTAssertEqual(notOIDC.json["error"]?.stringValue, "insufficient_scope")

            // Revoked with its refresh token: the access token is refused at once.
            let value2 = try await Self.revoke(client, token: try XCTUnwrap(unbound.stringMember("refresh_token")), clientId: "app")
            XCTAssertEqual(value2, .ok)
            let afterRevoke = try await Self.userInfo(client, authorization: "Bearer " + bearer)
            XCTAssertEqual(afterRevoke.status, .unauthorized)
            XCTAssertEqual(afterRevoke.json["error"]?.stringValue, "invalid_token")
        }
    }

    func testRevocationEndsOnlyTheClientsOwnSessionAndAnswers200ForAnyToken() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            _ = try await server.registerApp("other-app", redirectURI: "com.example.other:/cb")
            let issued = try await Self.signIn(server, client, app, browser: TestBrowser(client))
            let refresh = try XCTUnwrap(issued.stringMember("refresh_token"))
            let value3 = try await Self.revoke(client, token: refresh, clientId: "other-app")
            XCTAssertEqual(value3, .ok, "another client's token: 200, nothing said")
            let stillLive = try await client.requestToken(body: app.refreshForm(refresh), proofs: [])
            XCTAssertEqual(stillLive.status, .ok, "and nothing revoked")
            let next = try XCTUnwrap(stillLive.json["refresh_token"]?.stringValue)
            let value4 = try await Self.revoke(client, token: "not-a-token", clientId: "app")
            XCTAssertEqual(value4, .ok)
            // The access token names its session too.
            let value5 = try await Self.revoke(client, token: try XCTUnwrap(stillLive.json["access_token"]?.stringValue), clientId: "app")
            XCTAssertEqual(value5, .ok)
            let ended = try await client.requestToken(body: app.refreshForm(next), proofs: [])
            XCTAssertEqual(ended.json["reason"]?.stringValue, "refresh_token_revoked")
            let noToken = try await client.execute(
                uri: "/realms/demo/protocol/openid-connect/revoke", method: .post, headers: .form(), body: ByteBuffer(string: "client_id=app")
            ) { $0.status }
            XCTAssertEqual(noToken, .badRequest)
        }
    }

    func testEndingTheBrowserSessionEndsTheAppSessionsThatCameFromIt() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            let browser = TestBrowser(client)
            let first = try await Self.signIn(server, client, app, browser: browser)
            let second = try await Self.signIn(server, client, app, browser: browser)
            let elsewhere = try await Self.signIn(server, client, app, browser: TestBrowser(client))

            // The account page lists the apps, and ends one.
            let account = try await browser.get("/realms/demo/account")
            XCTAssertTrue(account.contains("Apps signed in to your account"))
            let endOne = try XCTUnwrap(account.capture(#"action="(/realms/demo/account/apps/[^"]+/end)""#))
            let ended = try await browser.post(endOne, ["csrf": account.field("csrf") ?? ""])
            XCTAssertEqual(ended.location, "/realms/demo/account?notice=app-ended")

            // Logging this browser out ends what came from it, and not the other browser's.
            let logout = try await browser.post("/realms/demo/logout", ["csrf": account.field("csrf") ?? ""])
            XCTAssertEqual(logout.status, .seeOther)
            for issued in [first, second] {
                let refused = try await client.requestToken(body: app.refreshForm(try XCTUnwrap(issued.stringMember("refresh_token"))), proofs: [])
                XCTAssertEqual(refused.json["reason"]?.stringValue, "refresh_token_revoked")
            }
            let other = try await client.requestToken(body: app.refreshForm(try XCTUnwrap(elsewhere.stringMember("refresh_token"))), proofs: [])
            XCTAssertEqual(other.status, .ok, "another browser's app session lives on")

            // Disabling the account ends every app session, for good.
            let rotated = try XCTUnwrap(other.json["refresh_token"]?.stringValue)
            _ = try await server.runtime.accounts.users.disable(realm: "demo", username: "test")
            _ = try await server.runtime.accounts.users.enable(realm: "demo", username: "test")
            let afterDisable = try await client.requestToken(body: app.refreshForm(rotated), proofs: [])
            XCTAssertEqual(afterDisable.json["reason"]?.stringValue, "refresh_token_revoked")
        }
    }

    func testRPInitiatedLogoutReturnsOnlyToARegisteredAddressAndAsksWithoutAHint() async throws {
        try await TestServer.forEachEngine { server, client in
            let redirects = try ClientRedirects(
                redirectURIs: ["com.example.app:/cb"], postLogoutRedirectURIs: ["com.example.app:/signed-out"], firstParty: true, requirePAR: false
            )
            _ = try await server.runtime.oauth.clients.createPublicClient(realm: "demo", clientId: "app", requireDPoP: false, redirects: redirects)
            let app = TestApp(clientId: "app", redirectURI: "com.example.app:/cb")
            let browser = TestBrowser(client)
            let issued = try await Self.signIn(server, client, app, browser: browser)
            let hint = try XCTUnwrap(issued.stringMember("id_token"))

            for address in ["https://evil.example/", "com.example.app:/signed-out/", "com.example.app:/cb", "com.example.app:/signed-out?x=1"] {
                let path = "/realms/demo/protocol/openid-connect/logout?id_token_hint=\(hint)&post_logout_redirect_uri=\(TestBrowser.encode(address))"
                let refused = try await browser.get(path)
                XCTAssertEqual(refused.status, .badRequest, address)
                XCTAssertNil(refused.location, "never an open redirect: \(address)")
            }
            let withoutApp = try await browser.get("/realms/demo/protocol/openid-connect/logout?post_logout_redirect_uri=com.example.app%3A%2Fsigned-out")
            XCTAssertEqual(withoutApp.status, .badRequest, "a return address needs the app it belongs to")
            let value6 = try await browser.get("/realms/demo/protocol/openid-connect/logout?id_token_hint=x.y.z").status
            XCTAssertEqual(value6, .badRequest)

            // Without a hint the person confirms first.
            let asked = try await browser.get("/realms/demo/protocol/openid-connect/logout?client_id=app&post_logout_redirect_uri=com.example.app%3A%2Fsigned-out&state=s1")
            XCTAssertEqual(asked.status, .ok)
            XCTAssertTrue(asked.headers[.contentSecurityPolicy]?.contains("form-action 'self' com.example.app:") ?? false)
            let value7 = try await server.runtime.accounts.browserSessions.session(cookie: String(try XCTUnwrap(browser.sessionCookie).split(separator: "=")[1]), realm: "demo")
            XCTAssertNotNil(value7)

            // With the hint of the signed-in person: at once, back to the app with its state.
            let done = try await browser.get(
                "/realms/demo/protocol/openid-connect/logout?id_token_hint=\(hint)&post_logout_redirect_uri=com.example.app%3A%2Fsigned-out&state=s2"
            )
            XCTAssertEqual(done.location, "com.example.app:/signed-out?state=s2")
            XCTAssertNil(browser.sessionCookie, "the session cookie is cleared")
            let refresh = try await client.requestToken(body: app.refreshForm(try XCTUnwrap(issued.stringMember("refresh_token"))), proofs: [])
            XCTAssertEqual(refresh.json["reason"]?.stringValue, "refresh_token_revoked", "the app session from that browser ended")

            // The confirmation page's form.
            _ = try await browser.signIn()
            let confirm = try await browser.get("/realms/demo/protocol/openid-connect/logout?client_id=app&post_logout_redirect_uri=com.example.app%3A%2Fsigned-out")
            let forged = try await browser.post("/realms/demo/protocol/openid-connect/logout", ["csrf": "forged", "client_id": "app"])
            XCTAssertEqual(forged.status, .forbidden)
            let confirmed = try await browser.post("/realms/demo/protocol/openid-connect/logout", [
                "csrf": confirm.field("csrf") ?? "", "client_id": "app", "post_logout_redirect_uri": "com.example.app:/signed-out",
            ])
            XCTAssertEqual(confirmed.location, "com.example.app:/signed-out")
        }
    }
}

extension Dictionary where Key == String, Value == JSONValue {
    func stringMember(_ key: String) -> String? { self[key]?.stringValue }
}
