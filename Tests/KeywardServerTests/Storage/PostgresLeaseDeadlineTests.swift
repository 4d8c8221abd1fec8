// Tests: a statement that cannot get a PostgreSQL connection gives up within its deadline instead of waiting for one.
import Foundation
import Logging
import NIOPosix
import PostgresNIO
import XCTest

@testable import KeywardServer

/// Found by tests/faults/pgrestart.py: while PostgreSQL was down, requests waited for a pooled connection as long as
/// the outage lasted, and clients timed out with no answer.
final class PostgresLeaseDeadlineTests: XCTestCase {
    func testALeaseNobodyCanGrantFailsAsUnavailable() async throws {
        // Nothing listens on port 1: the pool keeps failing to connect, and without a deadline the lease never ends.
        let configuration = try PostgresURL(parsing: "postgres://keyward@127.0.0.1:1/none?sslmode=disable").clientConfiguration()
        let quiet = Self.quiet
        let client = PostgresClient(configuration: configuration, backgroundLogger: quiet)
        let running = Task { await client.run() }
        defer { running.cancel() }
        let leases = PostgresLeases(client: client, limit: .milliseconds(300))
        let attempt = Task {
            try await leases.withConnection { connection in
                try await connection.query("SELECT 1", logger: quiet).collect().count
            }
        }
        // The guard for the old behaviour: a test that would hang fails instead.
        let guardTask = Task {
            try await Task.sleep(for: .seconds(60))
            attempt.cancel()
        }
        defer { guardTask.cancel() }
        do {
            _ = try await attempt.value
            XCTFail("a statement ran without a database")
        } catch let error as StoreError {
            guard case .unavailable(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("no PostgreSQL connection"), message)
        }
        // Known to be out of reach now: the next statement is answered at once, without another wait (a background
        // probe asks for a connection meanwhile).
        do {
            _ = try await leases.withConnection { _ in 1 }
            XCTFail("a statement ran without a database")
        } catch let error as StoreError {
            guard case .unavailable(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("out of reach"), message)
        }
        leases.close()
    }

    func testStartingAgainstAnAbsentServerNamesItAndTheSetting() async throws {
        do {
            let database = try await KeywardDatabase.open(
                .postgres(url: "postgres://keyward@127.0.0.1:1/none?sslmode=disable"), logger: Self.quiet, timeout: .seconds(30)
            )
            try await database.close()
            XCTFail("opened a database nobody serves")
        } catch let error as StoreError {
            guard case .unavailable = error else { return XCTFail("\(error)") }
            let message = "\(error)"
            XCTAssertTrue(message.contains("PostgreSQL at 127.0.0.1:1 did not answer at start-up"), message)
            XCTAssertTrue(message.contains("KEYWARD_DATABASE_URL"), message)
        }
    }

    private static var quiet: Logger {
        var logger = Logger(label: "lease-deadline-test")
        logger.logLevel = .critical  // the pool logs every refused connection
        return logger
    }
}
