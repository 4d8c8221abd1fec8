// Tests: sign-in attempts are throttled in the database, shared by concurrent guesses and nodes; old windows go.
import Foundation
import Hummingbird
import HummingbirdTesting
@testable import KeywardServer
import XCTest

/// The login throttle counts in the database: concurrent guesses and other nodes share one limit.
final class LoginThrottleTests: XCTestCase {
    func testConcurrentGuessesCannotOvertakeTheLimit() async throws {
        try await TestServer.forEachEngine { _, client in
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for attempt in 1...12 {
                    group.addTask { try await TestBrowser(client).signIn(password: "guess-\(attempt)").status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(statuses.filter { $0 == .unauthorized }.count, 5, "\(statuses)")
            XCTAssertEqual(statuses.filter { $0 == .tooManyRequests }.count, 7, "\(statuses)")
        }
    }

    func testNodesOnOneDatabaseShareTheCount() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.withSecondNode { _, clientB in
                func status(_ client: some TestClientProtocol, _ password: String = "test") async throws -> HTTPResponse.Status {
                    try await TestBrowser(client).signIn(password: password).status
                }
                for attempt in 1...3 {
                    let wrong = try await status(client, "a-\(attempt)")
                    XCTAssertEqual(wrong, .unauthorized)
                }
                for attempt in 1...2 {
                    let wrong = try await status(clientB, "b-\(attempt)")
                    XCTAssertEqual(wrong, .unauthorized)
                }
                let onB = try await status(clientB)
                XCTAssertEqual(onB, .tooManyRequests, "node B counts node A's guesses")
                let onA = try await status(client)
                XCTAssertEqual(onA, .tooManyRequests, "and node A node B's")
                server.clock.advance(by: 15 * 60)
                let afterWindow = try await status(clientB)
                XCTAssertEqual(afterWindow, .seeOther, "a new window after 15 minutes")
            }
        }
    }

    func testDeniedPushesCountSuccessClearsAndTheSweeperForgetsOldWindows() async throws {
        try await TestServer.forEachEngine { server, _ in
            let throttle = server.runtime.accounts.loginThrottle
            for _ in 1...5 { try await throttle.recordFailure(realm: "demo", username: "Test") }
            let wait = try await throttle.admit(realm: "demo", username: "test")
            XCTAssertEqual(wait, 900, "usernames are counted case-insensitively, from the first failure")
            server.clock.advance(by: 600)
            let later = try await throttle.admit(realm: "demo", username: "test")
            XCTAssertEqual(later, 300)
            server.clock.advance(by: 300)
            let fresh = try await throttle.admit(realm: "demo", username: "test")
            XCTAssertNil(fresh, "the window ended")
            try await throttle.recordSuccess(realm: "demo", username: "test")
            for _ in 1...5 { _ = try await throttle.admit(realm: "demo", username: "test") }
            let sixth = try await throttle.admit(realm: "demo", username: "test")
            XCTAssertNotNil(sixth, "success cleared the count, so five more were allowed, and no more")

            let sweeper = ExpiredRowSweeper(
                sweeps: [.singleUse(server.runtime.singleUse), .signingKeys(server.runtime.oauth.signingKeyStore), .loginAttempts(server.runtime.accounts.loginAttemptStore)],
                clock: server.clock, logger: .init(label: "test")
            )
            let kept = try await sweeper.sweepOnce()
            XCTAssertEqual(kept.loginAttempts, 0)
            server.clock.advance(by: ExpiredRowSweep.loginAttemptRetention + 1)
            let swept = try await sweeper.sweepOnce()
            XCTAssertEqual(swept.loginAttempts, 1)
            let afterSweep = try await throttle.admit(realm: "demo", username: "test")
            XCTAssertNil(afterSweep)
        }
    }

    func testAttemptsForAnUnknownRealmAreAStorageRefusalNotAWrite() async throws {
        try await TestServer.forEachEngine { server, _ in
            do {
                _ = try await server.runtime.accounts.loginThrottle.admit(realm: "no-such-realm", username: "x")
                XCTFail("an attempt needs its realm")
            } catch let error as StoreError {
                guard case .notFound = error else { return XCTFail("\(error)") }
            }
        }
    }
}
