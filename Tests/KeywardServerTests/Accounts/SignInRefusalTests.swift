// Tests: refused provider sign-ins are audited once per realm and reason a minute, and every one is logged.
import Foundation
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// A refused sign-in with an identity provider leaves a trace for the operator (security review L2): the audit
/// trail records it, sampled to one row per realm and reason a minute because anyone can send refusals, and the
/// log has every one with its request id.
final class SignInRefusalTests: XCTestCase {
    func testRefusedCallbacksAreAuditedOncePerReasonAMinute() async throws {
        try await TestServer.forEachEngine { server, client in
            let browser = TestBrowser(client)
            for _ in 0..<5 {
                let refused = try await browser.get("/realms/demo/v1/auth/corp/callback?state=from-elsewhere&code=x")
                XCTAssertEqual(refused.status, .badRequest)
                XCTAssertTrue(refused.contains("transaction_missing"))
            }
            let unknown = try await browser.get("/realms/demo/v1/auth/nobody")
            XCTAssertEqual(unknown.status, .notFound)

            var events = try await server.runtime.audit.events(realm: "demo", limit: 50).filter { $0.type == .signInRefused }
            XCTAssertEqual(events.map { Self.detail($0, "reason") }.sorted(), ["transaction_missing", "unknown_provider"])

            server.clock.advance(by: 61)
            _ = try await browser.get("/realms/demo/v1/auth/corp/callback?state=from-elsewhere&code=x")
            events = try await server.runtime.audit.events(realm: "demo", limit: 50).filter { $0.type == .signInRefused }
            let folded = events.filter { Self.detail($0, "reason") == "transaction_missing" }.map { Self.detail($0, "suppressed") }.filter { !$0.isEmpty }
            XCTAssertEqual(folded, ["4"], "the next minute's row carries the refusals folded into the last")
        }
    }

    private static func detail(_ event: AuditEvent, _ key: String) -> String {
        ((try? StrictJSON.parseObject(Array(event.detailsJSON.utf8)))?.string(key)) ?? ""
    }
}
