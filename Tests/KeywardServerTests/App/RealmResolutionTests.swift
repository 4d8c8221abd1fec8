// Tests: every route under /realms/{realm} resolves its realm in front, and refuses an unknown one with a 404 in its family's body.
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// docs/ARCHITECTURE.md §3 step 4: `RealmResolution` is the one resolver of a path's realm, in front of every route
/// under `/realms/{realm}`; an unknown realm is a 404 everywhere, in the body each family's clients parse.
final class RealmResolutionTests: XCTestCase {
    func testEveryRouteUnderARealmRefusesAnUnknownRealmWith404InItsFamilysBody() async throws {
        try await TestServer.forEachEngine { server, client in
            // The push-MFA event streams read no realm: what they answer for a challenge outside the path's realm is the
            // stream's own NOT_FOUND event (the next test).
            let routes = server.runtime.makeRouter().routes.map { (path: "\($0.path)", method: $0.method) }
                .filter { $0.path.hasPrefix("/realms/") && !$0.path.hasSuffix("/events") }
            XCTAssertGreaterThan(routes.count, 30, "\(routes.map(\.path))")
            for route in routes {
                let uri = "/" + route.path.split(separator: "/").map { component in
                    guard component.hasPrefix(":") || component.hasPrefix("{") else { return String(component) }
                    return component.contains("realm") ? "no-such-realm" : "x"
                }.joined(separator: "/")
                try await client.execute(uri: uri, method: route.method, headers: [.accept: "application/json"]) { response in
                    let label = "\(route.method) \(route.path)"
                    XCTAssertEqual(response.status, .notFound, label)
                    let body = String(buffer: response.body)
                    if response.headers[.contentType]?.hasPrefix("text/html") == true {
                        XCTAssertTrue(body.contains("Not found"), "\(label): \(body.prefix(200))")
                    } else {
                        let json = try StrictJSON.parseObject(response.body.readableBytesView)
                        // The push-MFA device API answers in the original's shape; every other API with the stable code.
                        let error = json["error"]?.stringValue
                        XCTAssertTrue(error == "realm_not_found" || error == "Realm not found", "\(label): \(body)")
                    }
                }
            }
        }
    }

    func testTheEventStreamsAnswerAnUnknownRealmWithTheirNotFoundEvent() async throws {
        try await TestServer.forEachEngine { _, client in
            for kind in ["enroll", "login"] {
                let uri = "/realms/no-such-realm/push-mfa/\(kind)/challenges/\(UUID().uuidString)/events?secret=abc"
                try await client.execute(uri: uri, method: .get) { response in
                    XCTAssertEqual(response.status, .ok, uri)
                    XCTAssertEqual(response.headers[.contentType], "text/event-stream", uri)
                    XCTAssertTrue(String(buffer: response.body).contains("\"status\":\"NOT_FOUND\""), String(buffer: response.body))
                }
            }
        }
    }

    /// A route registered without the middleware it reads from is a wiring mistake: a bare 500 whose body names
    /// nothing of the server's types, never a crash.
    func testARouteReadingWhatNoMiddlewareResolvedIsABare500() async throws {
        let router = Router(context: KeywardRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        router.get("/realms/:realm/unwired") { _, context in try context.realm.name }
        router.get("/realms/:realm/no-caller") { _, context in try context.caller(DPoPResourceGuard.Caller.self).subject }
        try await Application(router: router).test(.router) { client in
            for uri in ["/realms/demo/unwired", "/realms/demo/no-caller"] {
                try await client.execute(uri: uri, method: .get) { response in
                    XCTAssertEqual(response.status, .internalServerError, uri)
                    let body = String(buffer: response.body)
                    XCTAssertTrue(body.contains("internal_error"), body)
                    XCTAssertFalse(body.contains("realm") || body.contains("Caller") || body.contains("resolved"), body)
                }
            }
        }
    }

    func testTheResolvedRealmReachesTheRouteAndTheTokenEndpointKeepsRFC6749Bodies() async throws {
        try await TestServer.forEachEngine { _, client in
            try await client.execute(uri: "/realms/demo/.well-known/openid-configuration", method: .get) { response in
                XCTAssertEqual(response.status, .ok)
                XCTAssertTrue(try StrictJSON.parseObject(response.body.readableBytesView)["issuer"]?.stringValue?.hasSuffix("/realms/demo") ?? false)
            }
            try await client.execute(
                uri: "/realms/no-such-realm/protocol/openid-connect/token", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded"], body: ByteBuffer(string: "grant_type=client_credentials")
            ) { response in
                XCTAssertEqual(response.status, .notFound)
                let json = try StrictJSON.parseObject(response.body.readableBytesView)
                XCTAssertEqual(json["error"]?.stringValue, "realm_not_found")
                XCTAssertNotNil(json["error_description"]?.stringValue, "an RFC 6749 §5.2 body: \(json)")
                XCTAssertEqual(response.headers[.cacheControl], "no-store")
            }
        }
    }
}
