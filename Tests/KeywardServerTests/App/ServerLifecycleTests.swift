// Tests: a stopping server's bounded wait: an operation that ends wins; the limit wins over one that never ends.
import Synchronization
import XCTest

@testable import KeywardServer

final class ServerLifecycleTests: XCTestCase {
    func testAnOperationThatEndsWins() async {
        let ran = Mutex(false)
        let finished = await finishes(within: .seconds(3600)) { ran.withLock { $0 = true } }
        XCTAssertTrue(finished)
        XCTAssertTrue(ran.withLock { $0 })
    }

    /// The case a stopping server guards against: a close that ignores cancellation and never returns.
    func testTheLimitWinsOverAnOperationThatNeverEnds() async {
        let stuck = Gate()
        let finished = await finishes(within: .milliseconds(50)) { await stuck.wait() }
        XCTAssertFalse(finished)
        stuck.open()  // lets the abandoned task end with the test
    }
}

/// A wait that cancellation does not end, only `open()`.
private final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let openAlready = state.withLock { state in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if openAlready { continuation.resume() }
        }
    }

    func open() {
        for waiter in state.withLock({ state in defer { state = (true, []) }; return state.waiters }) { waiter.resume() }
    }
}
