import Foundation
import HTTPTypes
import KeywardJOSE
import Synchronization
@testable import KeywardServer
import XCTest

/// bcrypt is slow on purpose: it must not run on the threads that serve every other request. While fifty
/// password checks are in flight, a DPoP-protected GET is still answered.
final class PasswordLoadTests: XCTestCase {
    func testFiftyConcurrentSignInsDoNotHoldUpADPoPRequest() async throws {
        try await TestServer.forEachEngine(configure: { $0.bcryptCost = 10; $0.passwordThreads = 1 }) { server, client in
            let count = 50
            for index in 0..<count {
                _ = try await server.runtime.accounts.users.createUser(realm: "demo", username: "load-\(index)", password: "password-\(index)")
            }
            let key = try SigningKey.generate(.es256)
            let token = try await client.demoToken(server, key: key)
            let sent = Counter()
            let finished = Counter()

            let outcomes = try await withThrowingTaskGroup(of: (HTTPResponse.Status, Int?).self) { group in
                for index in 0..<count {
                    group.addTask {
                        let browser = TestBrowser(client)
                        let login = try await browser.get("/realms/demo/login")
                        sent.increment()
                        let answer = try await browser.post("/realms/demo/login", [
                            "csrf": login.field("csrf") ?? "", "username": "load-\(index)", "password": "password-\(index)",
                        ])
                        finished.increment()
                        return (answer.status, nil)
                    }
                }
                // Every sign-in has been sent before the GET is.
                while sent.value < count { await Task.yield() }
                group.addTask {
                    let answer = try await client.whoami(authorization: ["DPoP " + token], proofs: [try server.resourceProof(key, token: token)])
                    return (answer.status, finished.value)
                }
                var outcomes: [(HTTPResponse.Status, Int?)] = []
                for try await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            let get = try XCTUnwrap(outcomes.first { $0.1 != nil })
            XCTAssertEqual(get.0, .ok)
            // Measured: 0 sign-ins had finished when the GET was answered; 11 with bcrypt on the request threads.
            XCTAssertLessThanOrEqual(try XCTUnwrap(get.1), 5, "the GET waited for password checks")
            let signIns = outcomes.filter { $0.1 == nil }.map(\.0)
            XCTAssertEqual(signIns.filter { $0 == .seeOther }.count, count, "every sign-in went through: \(signIns)")
            let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            XCTAssertTrue(metrics.contains("keyward_password_checks_total{outcome=\"checked\"} \(count)"), "the hashes really ran")
        }
    }
}

private final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// Beyond `maxInFlight` checks a sign-in is refused at once rather than queued without bound.
final class PasswordWorkTests: XCTestCase {
    func testAChecksBeyondTheCapIsRefusedAndRunsAgainOnceTheCapFrees() async throws {
        let work = PasswordWork(threads: 1, maxInFlight: 1)
        let release = DispatchSemaphore(value: 0)
        let first = Task { try await work.run { release.wait(); return 1 } }
        while work.load < 1 { await Task.yield() }
        do {
            _ = try await work.run { 2 }
            XCTFail("a second check ran beyond the cap")
        } catch {}
        release.signal()
        let value = try await first.value
        XCTAssertEqual(value, 1)
        let again = try await work.run { 3 }
        XCTAssertEqual(again, 3)
        await work.shutdown()
    }

    /// The sign-in page turns a refusal into 503 with Retry-After, naming no internals.
    func testTheSignInPageAnswers503WhenThePasswordThreadsAreFull() async throws {
        try await TestServer.forEachEngine(configure: { $0.maxConcurrentPasswordChecks = 1 }) { server, client in
            let release = DispatchSemaphore(value: 0)
            let blocker = Task { try await server.runtime.accounts.users.passwordWork.run { release.wait() } }
            while server.runtime.accounts.users.passwordWork.load < 1 { await Task.yield() }
            let answer = try await TestBrowser(client).signIn()
            release.signal()
            try await blocker.value
            XCTAssertEqual(answer.status, .serviceUnavailable)
            XCTAssertEqual(answer.headers[.retryAfter], "2")
            XCTAssertTrue(answer.contains("Too many sign-ins at this moment"))
        }
    }
}
