// Tests: push-MFA challenge event streams report status changes, on one node and across nodes via LISTEN/NOTIFY.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
@testable import KeywardServer
import Synchronization
import XCTest

final class ChallengeEventStreamTests: XCTestCase {
    func testLoginStreamSeesPendingThenApproved() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let (challenge, secret) = try await server.createdChallenge()
            let stream = Task { try await client.events("/login/challenges/\(challenge.id)/events?secret=\(secret)") }
            try await server.waitUntilWatched(challenge.id)
            let approved = try await device.respond(client, token: token, challengeId: challenge.id)
            XCTAssertEqual(approved.status, .ok)
            let events = try await stream.value
            XCTAssertEqual(events.statuses, ["PENDING", "APPROVED"])
            XCTAssertEqual(events.headers[.contentType], "text/event-stream")
            XCTAssertEqual(events.headers[.cacheControl], "no-store")
            XCTAssertEqual(events.headers[HTTPField.Name("X-Accel-Buffering")!], "no")
            let last = try XCTUnwrap(events.payloads.last)
            XCTAssertEqual(last["challengeId"]?.stringValue, challenge.id)
            XCTAssertEqual(last["clientId"], "test-app")
            XCTAssertEqual(last["expiresAt"]?.stringValue, ChallengeEventStream.instant(challenge.expiresAt))
            XCTAssertTrue(events.raw.hasPrefix("event: status\ndata: {"), events.raw)
        }
    }

    func testLoginStreamEndsOnDenyLockoutAndExpiry() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.maxPendingChallenges = 5 }
            let (device, token) = try await server.enrolledDevice(client)

            let (denied, deniedSecret) = try await server.createdChallenge(session: "a")
            let deniedStream = Task { try await client.events("/login/challenges/\(denied.id)/events?secret=\(deniedSecret)") }
            try await server.waitUntilWatched(denied.id)
            _ = try await device.respond(client, token: token, challengeId: denied.id, action: "deny")
            let deniedEvents = try await deniedStream.value
            XCTAssertEqual(deniedEvents.statuses, ["PENDING", "DENIED"])

            let (expiring, expiringSecret) = try await server.createdChallenge(session: "b")
            let expiringStream = Task { try await client.events("/login/challenges/\(expiring.id)/events?secret=\(expiringSecret)") }
            try await server.waitUntilWatched(expiring.id)
            server.clock.advance(by: 241)
            let expiredEvents = try await expiringStream.value
            XCTAssertEqual(expiredEvents.statuses, ["PENDING", "EXPIRED"])

            let (locked, lockedSecret) = try await server.createdChallenge(session: "c")
            let lockedStream = Task { try await client.events("/login/challenges/\(locked.id)/events?secret=\(lockedSecret)") }
            try await server.waitUntilWatched(locked.id)
            _ = try await device.call(client, .post, "/login/lockout", token: try await device.accessToken(client))
            let lockedEvents = try await lockedStream.value
            XCTAssertEqual(lockedEvents.statuses, ["PENDING", "USER_LOCKED_OUT"])
        }
    }

    func testEnrollmentStreamSeesApprovedWhenThePhoneEnrolls() async throws {
        try await TestServer.forEachEngine { server, client in
            let user = try await server.demoUser()
            let enrollment = try await server.startEnrollment(user)
            let stream = Task { try await client.events("/enroll/challenges/\(enrollment.challenge.id)/events?secret=\(enrollment.watchSecret)") }
            try await server.waitUntilWatched(enrollment.challenge.id)
            let device = try TestDevice(server: server, userId: user.id)
            _ = try await device.enroll(client, enrollmentToken: enrollment.enrollmentToken)
            let events = try await stream.value
            XCTAssertEqual(events.statuses, ["PENDING", "APPROVED"])
            XCTAssertNil(events.payloads.last?["clientId"], "enrollment events carry no clientId")
        }
    }

    /// A resend deletes the old challenge; its stream reports EXPIRED rather than hanging.
    func testReplacedChallengeStreamReportsExpired() async throws {
        try await TestServer.forEachEngine { server, client in
            _ = try await server.enrolledDevice(client)
            let (old, secret) = try await server.createdChallenge(session: "a")
            let stream = Task { try await client.events("/login/challenges/\(old.id)/events?secret=\(secret)") }
            try await server.waitUntilWatched(old.id)
            _ = try await server.createdChallenge(session: "a")
            let events = try await stream.value
            XCTAssertEqual(events.statuses, ["PENDING", "EXPIRED"])
        }
    }

    /// A status the database announced (LISTEN/NOTIFY) is sent as it is: storage still says PENDING here, so a
    /// stream that read the challenge back would not end.
    func testAnnouncedStatusIsSentWithoutReadingTheChallenge() async throws {
        try await TestServer.forEachEngine(configure: { $0.ssePollMillis = 60000; $0.sseMaxConnectionLifetimeSeconds = 15 }) { server, client in
            try await server.settings { $0.maxPendingChallenges = 5 }
            _ = try await server.enrolledDevice(client)
            for (session, change, expected) in [("a", ChallengeChange.status(.denied), "DENIED"), ("b", .removed, "EXPIRED")] {
                let (challenge, secret) = try await server.createdChallenge(session: session)
                let stream = Task { try await client.events("/login/challenges/\(challenge.id)/events?secret=\(secret)") }
                try await server.waitUntilWatched(challenge.id)
                server.runtime.pushMFA.signals.notify(challenge.id, change)
                let events = try await stream.value
                XCTAssertEqual(events.statuses, ["PENDING", expected])
                let stored = try await server.runtime.pushMFA.service.challenge(id: challenge.id)
                XCTAssertEqual(stored?.status, .pending)
            }
        }
    }

    /// While storage cannot be read the stream keeps the status it sent (it used to report EXPIRED), and it
    /// carries on once storage is back.
    func testStorageErrorWhileRereadingIsNotAnOutcome() async throws {
        try await TestServer.forEachEngine(configure: { $0.ssePollMillis = 20; $0.sseMaxConnectionLifetimeSeconds = 15 }) { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let (challenge, secret) = try await server.createdChallenge()
            let stream = Task { try await client.events("/login/challenges/\(challenge.id)/events?secret=\(secret)") }
            try await server.waitUntilWatched(challenge.id)
            let sql = server.runtime.database.sql
            try await sql.raw("ALTER TABLE push_challenges RENAME TO push_challenges_away").run()
            try await server.waitUntilRereadFailures(atLeast: 3, client)
            try await sql.raw("ALTER TABLE push_challenges_away RENAME TO push_challenges").run()
            let approved = try await device.respond(client, token: token, challengeId: challenge.id)
            XCTAssertEqual(approved.status, .ok, approved.body)
            let events = try await stream.value
            XCTAssertEqual(events.statuses, ["PENDING", "APPROVED"])
        }
    }

    func testNotificationPayloads() {
        func parsed(_ payload: String) -> String {
            let (id, change) = ChallengeNotificationListener.change(announcedBy: payload)
            return "\(id)|\(change)"
        }
        XCTAssertEqual(parsed("c1 APPROVED"), "c1|status(KeywardServer.PushChallenge.Status.approved)")
        XCTAssertEqual(parsed("c1 USER_LOCKED_OUT"), "c1|status(KeywardServer.PushChallenge.Status.userLockedOut)")
        XCTAssertEqual(parsed("c1 DELETED"), "c1|removed")
        XCTAssertEqual(parsed("c1"), "c1|unknown", "the payload before migration 6")
        XCTAssertEqual(parsed("c1 SOMETHING_NEW"), "c1|unknown")
        XCTAssertEqual(parsed("c1 approved"), "c1|unknown", "statuses are upper case")
        XCTAssertEqual(parsed("c1 "), "c1|unknown")
        XCTAssertEqual(parsed(""), "|unknown")
    }

    func testOneShotRefusals() async throws {
        try await TestServer.forEachEngine { server, client in
            _ = try await server.enrolledDevice(client)
            let (challenge, secret) = try await server.createdChallenge()
            let enrollment = try await server.startEnrollment(try await server.demoUser())
            let cases: [(String, String)] = [
                ("/login/challenges/\(challenge.id)/events", "INVALID"),
                ("/login/challenges/\(challenge.id)/events?secret=", "INVALID"),
                ("/login/challenges/\(UUID().uuidString.lowercased())/events?secret=\(secret)", "NOT_FOUND"),
                ("/login/challenges/\(challenge.id)/events?secret=wrong", "FORBIDDEN"),
                ("/login/challenges/\(enrollment.challenge.id)/events?secret=\(enrollment.watchSecret)", "BAD_TYPE"),
                ("/enroll/challenges/\(enrollment.challenge.id)/events?secret=\(secret)", "FORBIDDEN"),
            ]
            for (path, status) in cases {
                let events = try await client.events(path)
                XCTAssertEqual(events.payloads, [["status": .string(status)]], path)
            }
            let malformed = try await client.push("/login/challenges/not-a-uuid/events?secret=x", method: .get)
            XCTAssertEqual(malformed.status, .badRequest)
            XCTAssertEqual(malformed.error, "Invalid UUID field: challengeId")
        }
    }

    func testInstantFormatMatchesJava() {
        XCTAssertEqual(ChallengeEventStream.instant(Date(timeIntervalSince1970: 1_700_000_000)), "2023-11-14T22:13:20Z")
        XCTAssertEqual(ChallengeEventStream.instant(Date(timeIntervalSince1970: 1_700_000_000.25)), "2023-11-14T22:13:20.250Z")
        XCTAssertEqual(ChallengeEventStream.instant(Date(timeIntervalSince1970: 0)), "1970-01-01T00:00:00Z")
        XCTAssertEqual(ChallengeEventStream.instant(Date(timeIntervalSince1970: -0.001)), "1969-12-31T23:59:59.999Z")
        XCTAssertEqual(ChallengeEventStream.instant(Date(timeIntervalSince1970: 951_782_400)), "2000-02-29T00:00:00Z")
        XCTAssertEqual(ChallengeEventStream.instant(Date(timeIntervalSince1970: 4_107_542_399.5)), "2100-02-28T23:59:59.500Z")
        // Against Foundation's calendar over 150 years in uneven steps (leap days, century years, month ends).
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var seconds: Int64 = -1_000_000_000
        while seconds < 3_700_000_000 {
            let date = Date(timeIntervalSince1970: Double(seconds))
            XCTAssertEqual(ChallengeEventStream.instant(date), formatter.string(from: date), "\(seconds)")
            seconds += 86_400 * 13 + 3_607
        }
    }
}

/// A finished SSE response: raw text, the `data:` payloads and their statuses.
struct ServerSentEvents: Sendable {
    let raw: String
    let headers: HTTPFields

    var payloads: [JSONObject] {
        raw.split(separator: "\n").filter { $0.hasPrefix("data: ") }.compactMap { try? StrictJSON.parseObject(Array($0.dropFirst(6).utf8)) }
    }

    var statuses: [String] { payloads.compactMap { $0["status"]?.stringValue } }
}

extension TestClientProtocol {
    func events(_ path: String) async throws -> ServerSentEvents {
        try await execute(uri: "/realms/demo/push-mfa" + path, method: .get) { response in
            ServerSentEvents(raw: String(buffer: response.body), headers: response.headers)
        }
    }
}

extension TestServer {
    /// Waits until an SSE stream is following `challengeId` on this node.
    /// Polls `/metrics` until open streams have failed to re-read their challenge `count` times.
    func waitUntilRereadFailures(atLeast count: Int, _ client: any TestClientProtocol) async throws {
        for _ in 0..<1000 {
            let text = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            let line = text.split(separator: "\n").first { $0.hasPrefix("keyward_challenge_event_stream_reread_failures_total ") }
            if let value = line?.split(separator: " ").last.flatMap({ Double($0) }), value >= Double(count) { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        XCTFail("streams did not fail to re-read \(count) times")
    }

    /// PostgreSQL's clock, to tell the LISTENs that come after it from those of servers before this test.
    func databaseClock() async throws -> String {
        let row = try await runtime.database.sql.raw("SELECT clock_timestamp()::text AS now").first()
        return try XCTUnwrap(row?.decode(column: "now", as: String.self))
    }

    /// Polls PostgreSQL (10 s at most) until a connection has run a LISTEN on the challenge channel since `since`.
    /// Counting all listening connections against a baseline could miss it: another test's listener may close
    /// meanwhile, and the database and channel are shared by every test's server.
    func waitUntilListening(since: String, file: StaticString = #filePath, line: UInt = #line) async throws {
        try await eventually("no connection started listening for challenge notifications", file: file, line: line) { [runtime] in
            let row = try await runtime.database.sql.raw("""
                SELECT COUNT(*) AS n FROM pg_stat_activity
                WHERE datname = current_database() AND state_change >= \(bind: since)::timestamptz
                  AND query ILIKE \(bind: "LISTEN%" + ChallengeNotificationListener.channel + "%")
                """).first()
            return try (row?.decode(column: "n", as: Int.self) ?? 0) > 0
        }
    }

    func waitUntilWatched(_ challengeId: String, file: StaticString = #filePath, line: UInt = #line) async throws {
        // 10 s: a starved 2-core host can hold a new task back for a while.
        try await eventually(file: file, line: line) { [runtime] in runtime.pushMFA.signals.isWatched(challengeId) }
    }
}

/// Two Keyward nodes on one PostgreSQL database: a stream on node A sees an approval made through node B.
/// Polling is turned down to a minute, longer than the stream lives (15 s): without LISTEN/NOTIFY the stream would
/// end on PENDING.
final class CrossNodeEventTests: XCTestCase {
    func testStreamOnOneNodeSeesApprovalThroughAnother() async throws {
        try XCTSkipIf(TestDatabase.postgresURL == nil, "several nodes need PostgreSQL (KEYWARD_TEST_POSTGRES_URL); SQLite is single-node by design")
        try await TestServer.forEachEngine(engines: [.postgres], configure: { $0.ssePollMillis = 60000; $0.sseMaxConnectionLifetimeSeconds = 15 }) { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let (challenge, secret) = try await server.createdChallenge()
            let before = try await server.databaseClock()
            let listener = Task { try await server.runtime.pushMFA.listener.run() }
            defer { listener.cancel() }
            try await server.withSecondNode { _, clientB in
                // A stream that starts before LISTEN is registered must not depend on it: wait until it is.
                try await server.waitUntilListening(since: before)
                let stream = Task { try await client.events("/login/challenges/\(challenge.id)/events?secret=\(secret)") }
                try await server.waitUntilWatched(challenge.id)
                let approved = try await device.respond(clientB, token: token, challengeId: challenge.id)
                XCTAssertEqual(approved.status, .ok, approved.body)
                let events = try await stream.value
                XCTAssertEqual(events.statuses, ["PENDING", "APPROVED"])
            }
        }
    }

    /// The trigger names the new status, or DELETED, in the notification it sends for every node.
    func testTriggerAnnouncesTheNewStatus() async throws {
        try XCTSkipIf(TestDatabase.postgresURL == nil, "notifications are PostgreSQL's (KEYWARD_TEST_POSTGRES_URL)")
        try await TestServer.forEachEngine(engines: [.postgres]) { server, client in
            try await server.settings { $0.maxPendingChallenges = 5 }
            let before = try await server.databaseClock()
            let (device, token) = try await server.enrolledDevice(client)
            let received = Mutex<[String]>([])
            let listening = Task {
                try await server.runtime.database.listen(channel: ChallengeNotificationListener.channel) { payload in
                    received.withLock { $0.append(payload) }
                }
            }
            defer { listening.cancel() }
            try await server.waitUntilListening(since: before)
            let (approved, _) = try await server.createdChallenge(session: "a")
            let (replaced, _) = try await server.createdChallenge(session: "b")
            let response = try await device.respond(client, token: token, challengeId: approved.id)
            XCTAssertEqual(response.status, .ok)
            _ = try await server.createdChallenge(session: "b")  // a resend deletes the session's challenge
            let expected = ["\(approved.id) APPROVED", "\(replaced.id) DELETED"]
            for _ in 0..<200 where received.withLock({ $0 }) != expected {
                try await Task.sleep(for: .milliseconds(10))
            }
            XCTAssertEqual(received.withLock { $0 }, expected)
        }
    }
}
