// Tests: health and readiness checks, request ids, metrics, and JSON errors for unknown routes and methods.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
import NIOCore
import KeywardServer
import XCTest

final class OperationsTests: XCTestCase {
    func testHealthReadinessAndRequestIds() async throws {
        try await TestServer.forEachEngine { _, client in
            try await client.execute(uri: "/healthz", method: .get) { response in
                XCTAssertEqual(response.status, .ok)
                XCTAssertNotNil(response.headers[.init("X-Request-Id")!])
                XCTAssertEqual(response.headers[.init("X-Content-Type-Options")!], "nosniff")
            }
            try await client.execute(uri: "/readyz", method: .get) { response in
                XCTAssertEqual(response.status, .ok)
            }
        }
    }

    func testReadinessFailsWhenTheDatabaseIsGone() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.runtime.database.close()
            try await client.execute(uri: "/readyz", method: .get) { response in
                XCTAssertEqual(response.status, .serviceUnavailable)
                XCTAssertEqual(try StrictJSON.parseObject(response.body.readableBytesView)["error"]?.stringValue, "unavailable")
            }
        }
    }

    /// A JSON route whose store cannot be reached answers 503 `unavailable`, as the pages do: an outage is not the
    /// server's bug (500) and a client may retry. Before, the JSON error middleware let a `StoreError` through as 500.
    func testAJSONRouteAnswers503WhenItsStoreIsGone() async throws {
        try await TestServer.forEachEngine { server, client in
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            let signedIn = try await browser.get("/realms/demo/v1/auth/session")
            XCTAssertEqual(signedIn.status, .ok)
            try await server.runtime.database.close()
            let down = try await browser.get("/realms/demo/v1/auth/session")
            XCTAssertEqual(down.status, .serviceUnavailable, down.html)
            XCTAssertEqual(try StrictJSON.parseObject(Array(down.html.utf8))["error"]?.stringValue, "unavailable")
            XCTAssertFalse(down.html.lowercased().contains("sqlite") || down.html.lowercased().contains("postgres"), down.html)
        }
    }

    func testMetricsCountRequestsTokensAndDPoPRejections() async throws {
        try await TestServer.forEachEngine { server, client in
            let key = try SigningKey.generate(.es256)
            _ = try await client.demoToken(server, key: key)
            _ = try await client.requestToken(proofs: ["garbage"])
            let text = try await client.execute(uri: "/metrics", method: .get) { response in
                XCTAssertEqual(response.status, .ok)
                return String(buffer: response.body)
            }
            XCTAssertTrue(text.contains(#"keyward_tokens_issued_total{realm="demo",token_type="DPoP"} 1"#), text)
            XCTAssertTrue(text.contains(#"keyward_dpop_rejections_total{endpoint="token",reason="#), text)
            XCTAssertTrue(text.contains(#"keyward_http_requests_total{route="/realms/{realm}/protocol/openid-connect/token",method="POST",status="200"} 1"#), text)
            XCTAssertTrue(text.contains("keyward_http_request_duration_seconds_bucket"), text)
        }
    }

    func testUnknownRouteAndMethodGetJSONErrors() async throws {
        try await TestServer.forEachEngine { _, client in
            try await client.execute(uri: "/nope", method: .get) { response in
                XCTAssertEqual(response.status, .notFound)
                XCTAssertEqual(try StrictJSON.parseObject(response.body.readableBytesView)["error"]?.stringValue, "not_found")
            }
        }
    }

    /// A path Keyward serves, asked with another method: 405 naming the methods it takes (RFC 9110 §15.5.6), not 404.
    func testAServedPathUnderAnotherMethodAnswers405WithAllow() async throws {
        try await TestServer.forEachEngine(engines: [.sqlite]) { _, client in
            for (uri, method, allow) in [
                ("/healthz", HTTPRequest.Method.put, "GET"),
                ("/realms/demo/login", .delete, "GET, POST"),
                ("/realms/any-realm/push-mfa/device/rotate-key", .post, "PUT"),
                ("/realms/demo/push-mfa/login/challenges/x/respond", .get, "POST"),
            ] {
                try await client.execute(uri: uri, method: method) { response in
                    XCTAssertEqual(response.status, .methodNotAllowed, "\(method) \(uri)")
                    XCTAssertEqual(response.headers[.allow], allow, "\(method) \(uri)")
                    let body = try StrictJSON.parseObject(response.body.readableBytesView)
                    XCTAssertEqual(body["error"]?.stringValue, "method_not_allowed")
                    XCTAssertNotNil(body["requestId"]?.stringValue)
                }
            }
            // A path with an extra segment is not served at all.
            try await client.execute(uri: "/healthz/more", method: .put) { response in
                XCTAssertEqual(response.status, .notFound)
            }
        }
    }
}
