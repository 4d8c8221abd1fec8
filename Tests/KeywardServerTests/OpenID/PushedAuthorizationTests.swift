// Tests: pushed authorization requests (RFC 9126): pushed once, used once, by the client that pushed them.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
import NIOCore
@testable import KeywardServer
import XCTest

final class PushedAuthorizationTests: XCTestCase {
    private static func push(
        _ client: any TestClientProtocol, _ app: TestApp, _ extra: [String: String] = [:], authorization: String? = nil
    ) async throws -> (status: HTTPResponse.Status, json: JSONObject) {
        var parameters = [
            "response_type": "code", "client_id": app.clientId, "redirect_uri": app.redirectURI, "scope": app.scope, "state": app.state,
            "nonce": app.nonce, "code_challenge": app.challenge, "code_challenge_method": "S256",
        ]
        for (name, value) in extra { parameters[name] = value.isEmpty ? nil : value }
        let body = parameters.map { "\(TestBrowser.encode($0.key))=\(TestBrowser.encode($0.value))" }.joined(separator: "&")
        var headers = HTTPFields.form()
        if let authorization { headers[.authorization] = authorization }
        return try await client.execute(uri: "/realms/demo/protocol/openid-connect/ext/par", method: .post, headers: headers, body: ByteBuffer(string: body)) {
            ($0.status, (try? StrictJSON.parseObject($0.body.readableBytesView)) ?? [:])
        }
    }

    private static func pushedPath(_ requestURI: String, clientId: String) -> String {
        "/realms/demo/protocol/openid-connect/auth?client_id=\(TestBrowser.encode(clientId))&request_uri=\(TestBrowser.encode(requestURI))"
    }

    func testAPushedRequestSignsInOnceWithinItsMinuteForTheClientThatPushedIt() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            _ = try await server.registerApp("other-app", redirectURI: "com.example.other:/cb")
            let browser = TestBrowser(client)
            _ = try await browser.signIn()

            let pushed = try await Self.push(client, app)
            XCTAssertEqual(pushed.status, .created, "\(pushed.json)")
            XCTAssertEqual(pushed.json["expires_in"]?.numberValue, 60)
            let requestURI = try XCTUnwrap(pushed.json["request_uri"]?.stringValue)
            XCTAssertTrue(requestURI.hasPrefix("urn:ietf:params:oauth:request_uri:"))

            // Parameters in the URL beside the pushed ones are not read: the pushed state comes back.
            let answer = try await browser.get(Self.pushedPath(requestURI, clientId: app.clientId) + "&state=from-the-url")
            let back = try XCTUnwrap(URLComponents(string: try XCTUnwrap(answer.location, "\(answer.status) \(answer.html.prefix(600))")))
            XCTAssertEqual(back.parameter("state"), app.state)
            let code = try XCTUnwrap(back.parameter("code"))
            let token = try await client.requestToken(body: app.tokenForm(code: code), proofs: [])
            XCTAssertEqual(token.status, .ok, "\(token.json)")

            let again = try await browser.get(Self.pushedPath(requestURI, clientId: app.clientId))
            XCTAssertEqual(again.status, .badRequest, "a request_uri is used once")
            XCTAssertNil(again.location)
            XCTAssertTrue(again.contains("used already"))

            let forOtherPush = try await Self.push(client, app)
            let forOther = try XCTUnwrap(forOtherPush.json["request_uri"]?.stringValue)
            let stolen = try await browser.get(Self.pushedPath(forOther, clientId: "other-app"))
            XCTAssertEqual(stolen.status, .badRequest, "another client's request_uri")
            XCTAssertNil(stolen.location)

            let latePush = try await Self.push(client, app)
            let late = try XCTUnwrap(latePush.json["request_uri"]?.stringValue)
            server.clock.advance(by: 61)
            let expired = try await browser.get(Self.pushedPath(late, clientId: app.clientId))
            XCTAssertEqual(expired.status, .badRequest)
            XCTAssertTrue(expired.contains("expired"))

            let forged = try await browser.get(Self.pushedPath("urn:ietf:params:oauth:request_uri:" + Base64URL.encode(SecureRandom.bytes(64)), clientId: app.clientId))
            XCTAssertEqual(forged.status, .badRequest)
        }
    }

    func testAClientThatMustPushIsRefusedAPlainRequestAndPushedRequestsAreCheckedWhenPushed() async throws {
        try await TestServer.forEachEngine { server, client in
            let redirects = try ClientRedirects(redirectURIs: ["https://web.example/cb"], postLogoutRedirectURIs: [], firstParty: true, requirePAR: true)
            let secret = try await server.runtime.oauth.clients.createClient(realm: "demo", clientId: "web", requireDPoP: false, redirects: redirects).secret
            let app = TestApp(clientId: "web", redirectURI: "https://web.example/cb")
            let browser = TestBrowser(client)
            let plain = try await browser.get(app.authorizationPath())
            let refused = try XCTUnwrap(URLComponents(string: try XCTUnwrap(plain.location)))
            XCTAssertEqual(refused.parameter("error"), "invalid_request")
            XCTAssertTrue(refused.parameter("error_description")?.contains("RFC 9126") ?? false)

            let basic = "Basic " + Data("web:\(secret)".utf8).base64EncodedString()
            let unauthenticated = try await Self.push(client, app)
            XCTAssertEqual(unauthenticated.status, .unauthorized, "a confidential client authenticates to push")
            let wrongSecret = try await Self.push(client, app, authorization: "Basic " + Data("web:wrong-secret".utf8).base64EncodedString())
            XCTAssertEqual(wrongSecret.json["error"]?.stringValue, "invalid_client")
            let cases: [([String: String], String)] = [
                (["code_challenge": ""], "invalid_request"),
                (["code_challenge_method": "plain"], "invalid_request"),
                (["redirect_uri": "https://web.example/cb/"], "invalid_request"),
                (["response_type": "token"], "unsupported_response_type"),
                (["scope": "admin"], "invalid_scope"),
                (["request_uri": "urn:ietf:params:oauth:request_uri:x"], "invalid_request"),
            ]
            for (extra, code) in cases {
                let answer = try await Self.push(client, app, extra, authorization: basic)
                XCTAssertEqual(answer.status, .badRequest, "\(extra)")
                XCTAssertEqual(answer.json["error"]?.stringValue, code, "\(extra): \(answer.json)")
            }
            let pushed = try await Self.push(client, app, authorization: basic)
            let requestURI = try XCTUnwrap(pushed.json["request_uri"]?.stringValue, "\(pushed.json)")
            let answer = try await app.authorize(browser, ["request_uri": requestURI])
            XCTAssertNotNil(answer.parameter("code"), "\(answer)")
        }
    }
}
