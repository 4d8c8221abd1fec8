// Tests: refused device requests write one audit row per realm and reason a minute; old events are swept.
import Foundation
import HTTPTypes
import KeywardJOSE
import Logging
@testable import KeywardServer
import XCTest

/// Refused, unauthenticated device requests cost an attacker nothing to send: their audit rows are kept to one
/// per realm and reason a minute, the next row saying how many were folded into it. Audit events are deleted
/// after `audit.retentionDays`.
final class AuditVolumeTests: XCTestCase {
    func testAThousandRefusedDeviceRequestsWriteOneRowPerReasonAMinute() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, _) = try await server.enrolledDevice(client)
            func refused() async throws {
                // No token at all: refused before anything is known about the caller.
                let answer = try await client.push("/login/pending?userId=\(device.userId)", method: .get, headers: [
                    HTTPField.Name("DPoP")!: try device.proof(method: "GET", url: device.base + "/login/pending"),
                ])
                XCTAssertEqual(answer.status, .unauthorized)
            }
            for _ in 0..<1000 { try await refused() }
            let failures = try await Self.authenticationFailures(server)
            XCTAssertEqual(failures.count, 1, "one row for 1,000 refusals of one reason within a minute")

            server.clock.advance(by: 61)
            try await refused()
            let after = try await Self.authenticationFailures(server)
            XCTAssertEqual(after.count, 2)
            let details = try StrictJSON.parseObject(Array(try XCTUnwrap(after.first).detailsJSON.utf8))
            XCTAssertEqual(details["suppressed"], "999", "the next row counts what the last minute folded in")
        }
    }

    func testEventsOlderThanTheRetentionAreSwept() async throws {
        try await TestServer.forEachEngine(configure: { $0.auditRetentionDays = 90 }) { server, _ in
            let audit = server.runtime.audit
            await audit.record(.userDisabled, realm: "demo", userId: "old")
            server.clock.advance(by: 2 * 86400)
            await audit.record(.userDisabled, realm: "demo", userId: "recent")
            server.clock.advance(by: 89 * 86400)
            let sweeper = server.runtime.sweeper
            let counts = try await sweeper.sweepOnce()
            XCTAssertEqual(counts.auditEvents, 2, "old, and the demo seed's UserCreated of the same instant")
            let left = try await audit.events(realm: "demo").map(\.userId)
            XCTAssertEqual(left, ["recent"])
        }
    }

    static func authenticationFailures(_ server: TestServer) async throws -> [AuditEvent] {
        try await server.runtime.audit.events(realm: "demo", limit: 5000).filter { $0.type == .dpopAuthenticationFailed }
    }
}
