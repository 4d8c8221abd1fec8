// Tests: bcrypt runs off the request threads, and checks beyond the cap are refused with a 503 rather than queued.
import Foundation
import HTTPTypes
import KeywardJOSE
import Synchronization
@testable import KeywardServer
import XCTest

/// bcrypt is slow on purpose: it must not run on the threads that serve every other request. While fifty
/// password checks wait for the password thread, a DPoP-protected GET is still answered.
final class PasswordLoadTests: XCTestCase {
    func testFiftyConcurrentSignInsDoNotHoldUpADPoPRequest() async throws {
        // Room for the fifty checks and the holder below in the password queue.
        try await TestServer.forEachEngine(configure: { $0.bcryptCost = 10; $0.passwordThreads = 1; $0.maxConcurrentPasswordChecks = 64 }) { server, client in
            let count = 50
            for index in 0..<count {
                _ = try await server.runtime.accounts.users.createUser(realm: "demo", username: "load-\(index)", password: "password-\(index)")
            }
            let key = try SigningKey.generate(.es256)
            let token = try await client.demoToken(server, key: key)
            let passwords = server.runtime.accounts.users.passwordWork
            // The one password thread is held, so the order is fixed rather than raced: every sign-in is waiting
            // for it when the GET is sent, and none can finish before the GET is answered.
            let release = DispatchSemaphore(value: 0)
            // Whatever goes wrong (a GET that waits for the password thread after all), the thread is let go within a
            // minute, so the test fails instead of hanging. A dispatch timer, not a task: it must fire even if the
            // cooperative threads are stuck. Signals beyond the first are harmless.
            DispatchQueue.global().asyncAfter(deadline: .now() + 60) { release.signal() }
            let holder = Task { try await passwords.run { release.wait() } }
            try await eventually { passwords.load >= 1 }
            let finished = Counter()

            let (get, signIns) = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for index in 0..<count {
                    group.addTask {
                        let browser = TestBrowser(client)
                        let login = try await browser.get("/realms/demo/login")
                        let answer = try await browser.post("/realms/demo/login", [
                            "csrf": login.field("csrf") ?? "", "username": "load-\(index)", "password": "password-\(index)",
                        ])
                        finished.increment()
                        return answer.status
                    }
                }
                // If the GET throws, the held thread is let go at once, or the group would wait for its sign-ins.
                defer { release.signal() }
                // Every sign-in is in the password queue, off the request threads, before the GET is sent (waited for
                // 30 s at most: a sign-in that failed early ends the test with its own failure).
                let deadline = ContinuousClock.now + .seconds(30)
                while passwords.load < count + 1, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
                let queued = passwords.load - 1
                let answer = try await client.whoami(authorization: ["DPoP " + token], proofs: [try server.resourceProof(key, token: token)])
                let finishedBeforeRelease = finished.value
                release.signal()
                var signIns: [HTTPResponse.Status] = []
                for try await status in group { signIns.append(status) }
                return ((status: answer.status, finishedBeforeRelease: finishedBeforeRelease, queued: queued), signIns)
            }
            try await holder.value
            XCTAssertEqual(get.queued, count, "every sign-in was waiting for the password thread when the GET was sent")
            XCTAssertEqual(get.status, .ok, "the GET was answered while fifty sign-ins waited for the password thread")
            XCTAssertEqual(get.finishedBeforeRelease, 0, "no sign-in finished while the password thread was held")
            XCTAssertEqual(signIns.filter { $0 == .seeOther }.count, count, "every sign-in went through: \(signIns)")
            let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            // The fifty hashes and the holder.
            XCTAssertTrue(metrics.contains("keyward_password_checks_total{outcome=\"checked\"} \(count + 1)"), "the hashes really ran")
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
