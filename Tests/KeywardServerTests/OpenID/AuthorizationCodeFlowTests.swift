// Tests: an app signs a person in with the authorization code flow, PKCE and DPoP, and refreshes with rotation.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class AuthorizationCodeFlowTests: XCTestCase {
    func testAFirstPartyAppSignsInWithACodeBoundToItsKeyAndRefreshesWithRotation() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            let browser = TestBrowser(client)
            let login = try await browser.get(app.authorizationPath())
            XCTAssertEqual(login.status, .seeOther)
            let loginPage = try await browser.get(try XCTUnwrap(login.location))
            XCTAssertTrue(
                loginPage.headers[.contentSecurityPolicy]?.contains("form-action 'self' com.example.app:") ?? false,
                "the sign-in form may end at the app: \(loginPage.headers[.contentSecurityPolicy] ?? "")"
            )
            let key = try SigningKey.generate(.es256)
            let answer = try await app.authorize(browser, ["dpop_jkt": try key.publicJWK.thumbprint()])
            XCTAssertEqual(answer.scheme, "com.example.app")
            XCTAssertEqual(answer.path, "/cb")
            XCTAssertEqual(answer.parameter("state"), app.state, "state comes back unchanged")
            XCTAssertEqual(answer.parameter("iss"), TestServer.publicURL + "/realms/demo", "RFC 9207 iss")
            let code = try XCTUnwrap(answer.parameter("code"))
            XCTAssertGreaterThanOrEqual(code.count, 22, "at least 128 bits")
            XCTAssertEqual(
                browser.cookieNames.filter { $0.hasPrefix("keyward-authz-") }.count, 1, "the completed request's cookie is cleared; the one left unfinished above stays"
            )

            let issued = try await client.requestToken(body: app.tokenForm(code: code), proofs: [try server.tokenProof(key)])
            XCTAssertEqual(issued.status, .ok, "\(issued.json)")
            XCTAssertEqual(issued.json["token_type"]?.stringValue, "DPoP")
            XCTAssertEqual(issued.json["scope"]?.stringValue, "openid")
            let accessToken = try XCTUnwrap(issued.json["access_token"]?.stringValue)
            let access = try UnverifiedJWT(accessToken).claims
            XCTAssertEqual(access["cnf"]?.objectValue?["jkt"]?.stringValue, try key.publicJWK.thumbprint())
            XCTAssertEqual(access["client_id"]?.stringValue, "app")
            XCTAssertEqual(access["acr"]?.stringValue, "urn:keyward:acr:1fa")
            XCTAssertNotNil(access["auth_time"]?.numberValue)

            let idToken = try await server.verifyIDToken(try XCTUnwrap(issued.json["id_token"]?.stringValue), clientId: "app")
            let user = try await XCTUnwrapAsync(try await server.runtime.accounts.users.user(realm: "demo", username: "test"))
            XCTAssertEqual(idToken["sub"]?.stringValue, user.id)
            XCTAssertEqual(idToken["nonce"]?.stringValue, app.nonce)
            XCTAssertEqual(idToken["amr"]?.arrayValue?.compactMap(\.stringValue), ["pwd"])
            XCTAssertEqual(idToken["acr"]?.stringValue, "urn:keyward:acr:1fa")
            XCTAssertEqual(idToken["at_hash"]?.stringValue, TokenHash.leftHalf(of: accessToken, algorithm: .es256))
            XCTAssertEqual(idToken["auth_time"]?.numberValue, server.clock.now().timeIntervalSince1970.rounded(.down))

            // The whoami resource accepts the token with a proof by the same key.
            let whoami = try await client.whoami(authorization: ["DPoP " + accessToken], proofs: [try server.resourceProof(key, token: accessToken)])
            XCTAssertEqual(whoami.status, .ok)

            // Refresh: the next token, and the presented one stops working.
            let first = try XCTUnwrap(issued.json["refresh_token"]?.stringValue)
            server.clock.advance(by: 90)
            let refreshed = try await client.requestToken(body: app.refreshForm(first), proofs: [try server.tokenProof(key)])
            XCTAssertEqual(refreshed.status, .ok, "\(refreshed.json)")
            let second = try XCTUnwrap(refreshed.json["refresh_token"]?.stringValue)
            XCTAssertNotEqual(second, first)
            // The family's row records the use the account page shows, before the answer.
            let familyId = try XCTUnwrap(access["sid"]?.stringValue)
            let used = try await XCTUnwrapAsync(try await server.runtime.openID.families.family(realm: "demo", id: familyId))
            XCTAssertEqual(used.generation, 1)
            XCTAssertEqual(used.lastUsedAt.timeIntervalSince1970, server.clock.now().timeIntervalSince1970, accuracy: 0.002)
            XCTAssertEqual(used.createdAt.timeIntervalSince1970 + 90, used.lastUsedAt.timeIntervalSince1970, accuracy: 0.002)
            XCTAssertNil(refreshed.json["id_token"], "no id_token on refresh")
            XCTAssertEqual(refreshed.json["token_type"]?.stringValue, "DPoP")

            // With another key: refused, and the family lives on.
            let otherKey = try SigningKey.generate(.es256)
            let stolen = try await client.requestToken(body: app.refreshForm(second), proofs: [try server.tokenProof(otherKey)])
            XCTAssertEqual(stolen.status, .badRequest)
            XCTAssertEqual(stolen.json["reason"]?.stringValue, "refresh_token_key_mismatch")
            let withoutProof = try await client.requestToken(body: app.refreshForm(second), proofs: [])
            XCTAssertEqual(withoutProof.json["error"]?.stringValue, "invalid_dpop_proof")

            // The rotated one again: the whole family is revoked, the current token with it.
            let reused = try await client.requestToken(body: app.refreshForm(first), proofs: [try server.tokenProof(key)])
            XCTAssertEqual(reused.json["error"]?.stringValue, "invalid_grant")
            XCTAssertEqual(reused.json["reason"]?.stringValue, "refresh_token_reused")
            let afterReuse = try await client.requestToken(body: app.refreshForm(second), proofs: [try server.tokenProof(key)])
            XCTAssertEqual(afterReuse.json["error"]?.stringValue, "invalid_grant")
            XCTAssertEqual(afterReuse.json["reason"]?.stringValue, "refresh_token_revoked")
            let events = try await server.runtime.audit.events(realm: "demo", userId: user.id, limit: 20)
            XCTAssertTrue(events.contains { $0.type == .refreshTokenReused }, "the reuse is an audit event")
        }
    }

    func testASecondUseOfACodeIsRefusedAndRevokesWhatTheFirstGave() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            let answer = try await app.authorize(TestBrowser(client))
            let code = try XCTUnwrap(answer.parameter("code"))
            let first = try await client.requestToken(body: app.tokenForm(code: code), proofs: [])
            XCTAssertEqual(first.status, .ok, "\(first.json)")
            XCTAssertEqual(first.json["token_type"]?.stringValue, "Bearer", "no proof, no binding, for a client that does not require one")
            let second = try await client.requestToken(body: app.tokenForm(code: code), proofs: [])
            XCTAssertEqual(second.status, .badRequest)
            XCTAssertEqual(second.json["error"]?.stringValue, "invalid_grant")
            XCTAssertEqual(second.json["reason"]?.stringValue, "code_reused")
            let refresh = try await client.requestToken(body: app.refreshForm(try XCTUnwrap(first.json["refresh_token"]?.stringValue)), proofs: [])
            XCTAssertEqual(refresh.json["reason"]?.stringValue, "refresh_token_revoked", "the first use's refresh token is revoked")
            let events = try await server.runtime.audit.events(realm: "demo", userId: nil, limit: 50)
            XCTAssertTrue(events.contains { $0.type == .authorizationCodeReused })
        }
    }

    func testACodeIsRedeemedAtMostOnceUnderConcurrentRedemptions() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            let answer = try await app.authorize(TestBrowser(client))
            let code = try XCTUnwrap(answer.parameter("code"))
            let answers = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let answer = try await client.requestToken(body: app.tokenForm(code: code), proofs: [])
                        return (answer.status, answer.json["refresh_token"]?.stringValue)
                    }
                }
                return try await group.reduce(into: [(HTTPResponse.Status, String?)]()) { $0.append($1) }
            }
            // At most one redemption wins; the others are reuses, which revoke what the winner got (RFC 9700 §4.2.4),
            // so the winner's tokens may be refused before it is answered: then none wins.
            XCTAssertLessThanOrEqual(answers.filter { $0.0 == .ok }.count, 1, "\(answers.map(\.0))")
            XCTAssertEqual(answers.filter { $0.0 == .badRequest }.count + answers.filter { $0.0 == .ok }.count, 20)
            for refreshToken in answers.compactMap(\.1) {
                let refreshed = try await client.requestToken(body: app.refreshForm(refreshToken), proofs: [])
                XCTAssertEqual(refreshed.json["reason"]?.stringValue, "refresh_token_revoked", "the reuses revoked the winner's family")
            }
        }
    }

    func testARefreshTokenIsSpentAtMostOnceUnderConcurrentRefreshes() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            let answer = try await app.authorize(TestBrowser(client))
            let code = try XCTUnwrap(answer.parameter("code"))
            let issued = try await client.requestToken(body: app.tokenForm(code: code), proofs: [])
            let token = try XCTUnwrap(issued.json["refresh_token"]?.stringValue)
            let answers = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let answer = try await client.requestToken(body: app.refreshForm(token), proofs: [])
                        return (answer.status, answer.json["reason"]?.stringValue)
                    }
                }
                return try await group.reduce(into: [(HTTPResponse.Status, String?)]()) { $0.append($1) }
            }
            // One refresh spends the token; another presents a spent token, which ends the family, and those that come
            // after find it ended.
            let wins = answers.filter { $0.0 == .ok }.count
            XCTAssertLessThanOrEqual(wins, 1, "\(answers.map(\.0))")
            XCTAssertEqual(answers.filter { ["refresh_token_reused", "refresh_token_revoked"].contains($0.1) }.count, 20 - wins, "\(answers.map(\.1))")
            XCTAssertTrue(answers.contains { $0.1 == "refresh_token_reused" }, "the reuse is told as one")
            let familyId = try XCTUnwrap(try UnverifiedJWT(try XCTUnwrap(issued.json["access_token"]?.stringValue)).claims["sid"]?.stringValue)
            let family = try await server.runtime.openID.families.family(realm: "demo", id: familyId)
            XCTAssertNotNil(family?.revokedAt)
        }
    }

    func testTheCodeIsCheckedAgainstItsVerifierClientRedirectURIKeyAndAge() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            let other = try await server.registerApp("other-app", redirectURI: "com.example.other:/cb")
            let browser = TestBrowser(client)
            func freshCode(_ extra: [String: String] = [:]) async throws -> String {
                let answer = try await app.authorize(browser, extra)
                return try XCTUnwrap(answer.parameter("code"))
            }
            func refusal(_ form: String, proofs: [String] = []) async throws -> String? {
                let answer = try await client.requestToken(body: form, proofs: proofs)
                XCTAssertEqual(answer.status, .badRequest, "\(answer.json)")
                return answer.json["reason"]?.stringValue ?? answer.json["error"]?.stringValue
            }
            let code = try await freshCode()
            let wrongVerifier = try await refusal(app.tokenForm(code: code, verifier: Base64URL.encode(SecureRandom.bytes(32))))
            XCTAssertEqual(wrongVerifier, "pkce_mismatch")
            let outcome1 = try await refusal(app.tokenForm(code: code, clientId: other.clientId))
            XCTAssertEqual(outcome1, "code_client_mismatch")
            let outcome2 = try await refusal(app.tokenForm(code: code, redirectURI: "com.example.app:/cb/"))
            XCTAssertEqual(outcome2, "redirect_uri_mismatch")
            let outcome3 = try await refusal(app.tokenForm(code: code + "A"))
            XCTAssertEqual(outcome3, "code_invalid")
            let noVerifier = try await client.requestToken(body: "grant_type=authorization_code&code=\(code)&redirect_uri=x&client_id=app", proofs: [])
            XCTAssertEqual(noVerifier.json["error"]?.stringValue, "invalid_request")
            // None of those spent it.
            let outcome4 = try await client.requestToken(body: app.tokenForm(code: code), proofs: []).status
            XCTAssertEqual(outcome4, .ok)

            server.clock.advance(by: 61)
            let late = try await freshCode()
            server.clock.advance(by: 61)
            let outcome5 = try await refusal(app.tokenForm(code: late))
            XCTAssertEqual(outcome5, "code_expired")

            let key = try SigningKey.generate(.es256)
            let bound = try await freshCode(["dpop_jkt": try key.publicJWK.thumbprint()])
            let outcome6 = try await refusal(app.tokenForm(code: bound))
            XCTAssertEqual(outcome6, "dpop_proof_required")
            let otherKey = try SigningKey.generate(.es256)
            let outcome7 = try await refusal(app.tokenForm(code: bound), proofs: [try server.tokenProof(otherKey)])
            XCTAssertEqual(outcome7, "dpop_jkt_mismatch")
            let outcome8 = try await client.requestToken(body: app.tokenForm(code: bound), proofs: [try server.tokenProof(key)]).status
            XCTAssertEqual(outcome8, .ok)
        }
    }

    func testRefusalsBeforeTheRedirectURIIsTrustedArePagesAndNeverRedirects() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            let browser = TestBrowser(client)
            let cases: [(String, [String: String])] = [
                ("no client", ["client_id": ""]),
                ("unknown client", ["client_id": "nobody"]),
                ("no redirect URI", ["redirect_uri": ""]),
                ("trailing slash", ["redirect_uri": "com.example.app:/cb/"]),
                ("added query", ["redirect_uri": "com.example.app:/cb?x=1"]),
                ("other case", ["redirect_uri": "com.example.App:/cb"]),
                ("another app's", ["redirect_uri": "https://evil.example/cb"]),
            ]
            for (name, extra) in cases {
                let page = try await browser.get(app.authorizationPath(extra))
                XCTAssertEqual(page.status, .badRequest, name)
                XCTAssertNil(page.location, name)
                XCTAssertTrue(page.contains("This sign-in request cannot be completed"), name)
            }
            let repeated = try await browser.get(app.authorizationPath() + "&client_id=app")
            XCTAssertEqual(repeated.status, .badRequest)
            XCTAssertNil(repeated.location)
        }
    }

    func testRefusalsAfterTheRedirectURIIsTrustedGoBackWithErrorStateAndIss() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp(scope: "read")
            let browser = TestBrowser(client)
            let cases: [(String, [String: String], String)] = [
                ("no code_challenge", ["code_challenge": ""], "invalid_request"),
                ("plain", ["code_challenge_method": "plain"], "invalid_request"),
                ("token response type", ["response_type": "token"], "unsupported_response_type"),
                ("unregistered scope", ["scope": "openid admin"], "invalid_scope"),
                ("prompt=none without a session", ["prompt": "none"], "login_required"),
                ("request objects", ["request": "eyJ.x.y"], "request_not_supported"),
            ]
            for (name, extra, code) in cases {
                let page = try await browser.get(app.authorizationPath(extra))
                XCTAssertEqual(page.status, .seeOther, name)
                let location = try XCTUnwrap(URLComponents(string: try XCTUnwrap(page.location)), name)
                XCTAssertEqual(location.scheme, "com.example.app", name)
                XCTAssertEqual(location.parameter("error"), code, name)
                XCTAssertEqual(location.parameter("state"), app.state, name)
                XCTAssertEqual(location.parameter("iss"), TestServer.publicURL + "/realms/demo", name)
                XCTAssertNil(location.parameter("code"), name)
            }
            // A state the client sent comes back byte for byte, spaces and punctuation included.
            var odd = app
            odd.state = "a b+c/d?e=f&g%h~"
            let back = try await odd.authorize(browser, ["prompt": "none"])
            XCTAssertEqual(back.parameter("state"), odd.state)
        }
    }

    func testAnAppThatIsNotFirstPartyAsksForConsent() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp("partner", redirectURI: "https://partner.example/cb", firstParty: false)
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            let silent = try await browser.get(app.authorizationPath(["prompt": "none"]))
            XCTAssertEqual(URLComponents(string: silent.location ?? "")?.parameter("error"), "consent_required")

            let consent = try await browser.get(app.authorizationPath())
            XCTAssertEqual(consent.status, .ok)
            XCTAssertTrue(consent.contains("partner"))
            XCTAssertTrue(consent.contains("Know who you are"))
            XCTAssertTrue(consent.headers[.contentSecurityPolicy]?.contains("form-action 'self' https://partner.example;") ?? false)
            let id = try XCTUnwrap(consent.field("id"))
            let denied = try await browser.post("/realms/demo/protocol/openid-connect/auth/consent", ["csrf": consent.field("csrf") ?? "", "id": id, "decision": "deny"])
            let deniedAt = try XCTUnwrap(URLComponents(string: try XCTUnwrap(denied.location)))
            XCTAssertEqual(deniedAt.host, "partner.example")
            XCTAssertEqual(deniedAt.parameter("error"), "access_denied")
            XCTAssertEqual(deniedAt.parameter("state"), app.state)
            let again = try await browser.post("/realms/demo/protocol/openid-connect/auth/consent", ["csrf": consent.field("csrf") ?? "", "id": id, "decision": "allow"])
            XCTAssertEqual(again.status, .badRequest, "a decided request is gone")

            let second = try await browser.get(app.authorizationPath())
            let forged = try await browser.post("/realms/demo/protocol/openid-connect/auth/consent", ["csrf": "forged", "id": second.field("id") ?? "", "decision": "allow"])
            XCTAssertEqual(forged.status, .forbidden)
            let allowed = try await browser.post("/realms/demo/protocol/openid-connect/auth/consent", ["csrf": second.field("csrf") ?? "", "id": second.field("id") ?? "", "decision": "allow"])
            let code = try XCTUnwrap(URLComponents(string: try XCTUnwrap(allowed.location))?.parameter("code"))
            let outcome9 = try await client.requestToken(body: app.tokenForm(code: code), proofs: []).status
            XCTAssertEqual(outcome9, .ok)
        }
    }

    func testPromptLoginAndMaxAgeAskForAFreshSignIn() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp(redirectURI: "http://127.0.0.1/cb")
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            // Signed in: straight back, on the port the app listens on (RFC 8252 §7.3).
            var loopback = app
            loopback.redirectURI = "http://127.0.0.1:49152/cb"
            let direct = try await browser.get(loopback.authorizationPath())
            XCTAssertTrue(direct.location?.hasPrefix("http://127.0.0.1:49152/cb?code=") ?? false, "\(direct.location ?? "")")

            // prompt=login at the very moment of a sign-in still asks for another (RFC: the sign-in came before it).
            let sameInstant = try await browser.get(loopback.authorizationPath(["prompt": "login"]))
            XCTAssertTrue(sameInstant.location?.hasPrefix("/realms/demo/login?") ?? false, "\(sameInstant.location ?? "")")

            server.clock.advance(by: 120)
            for extra in [["prompt": "login"], ["max_age": "60"]] {
                let asked = try await browser.get(loopback.authorizationPath(extra))
                XCTAssertTrue(asked.location?.hasPrefix("/realms/demo/login?") ?? false, "\(extra): \(asked.location ?? "")")
                XCTAssertTrue(asked.location?.contains("reauth=1") ?? false, "\(extra)")
                let answer = try await loopback.authorize(browser, extra)
                XCTAssertNotNil(answer.parameter("code"), "\(extra): \(answer)")
                let signedInNow = try await client.requestToken(body: loopback.tokenForm(code: try XCTUnwrap(answer.parameter("code"))), proofs: [])
                let idToken = try await server.verifyIDToken(try XCTUnwrap(signedInNow.json["id_token"]?.stringValue), clientId: "app")
                XCTAssertEqual(idToken["auth_time"]?.numberValue, server.clock.now().timeIntervalSince1970.rounded(.down), "\(extra)")
                server.clock.advance(by: 120)
            }
            let none = try await browser.get(loopback.authorizationPath(["max_age": "60", "prompt": "none"]))
            XCTAssertEqual(URLComponents(string: none.location ?? "")?.parameter("error"), "login_required")
        }
    }
}
