// Tests: background work such as login pushes is bounded in running and waiting tasks; the excess is dropped.
import Synchronization
import XCTest

@testable import KeywardServer

/// Background work (login pushes) is bounded: a slow downstream cannot pile up tasks without limit.
final class BoundedTasksTests: XCTestCase {
    /// Work that waits until the test releases it, and records how many ran at once.
    private final class Gate: Sendable {
        let running = Mutex(0)
        let mostAtOnce = Mutex(0)
        let finished = Mutex(0)
        let held = Mutex<[CheckedContinuation<Void, Never>]>([])

        func work() async {
            let now = running.withLock { running in
                running += 1
                return running
            }
            mostAtOnce.withLock { $0 = max($0, now) }
            await withCheckedContinuation { continuation in held.withLock { $0.append(continuation) } }
            running.withLock { $0 -= 1 }
            finished.withLock { $0 += 1 }
        }

        var heldCount: Int { held.withLock { $0.count } }

        func releaseAll() {
            for continuation in held.withLock({ held in defer { held = [] }; return held }) { continuation.resume() }
        }
    }

    func testAtMostMaxRunningRunAndMaxWaitingQueueTheRestIsDropped() async {
        let dropped = Mutex(0)
        let tasks = BoundedTasks(maxRunning: 2, maxWaiting: 3, onDrop: { dropped.withLock { $0 += 1 } })
        let gate = Gate()
        var accepted = 0
        for _ in 0..<10 where tasks.submit({ await gate.work() }) { accepted += 1 }
        XCTAssertEqual(accepted, 5, "two running, three queued")
        XCTAssertEqual(dropped.withLock { $0 }, 5)
        while gate.heldCount < 2 { await Task.yield() }
        XCTAssertEqual(tasks.load.running, 2)
        XCTAssertEqual(tasks.load.waiting, 3)
        // Release whatever is held until all five have run; never more than two at once.
        while gate.finished.withLock({ $0 }) < 5 {
            gate.releaseAll()
            await Task.yield()
        }
        XCTAssertEqual(gate.mostAtOnce.withLock { $0 }, 2)
        while tasks.load.running > 0 { await Task.yield() }
        XCTAssertTrue(tasks.submit({}), "slots are free again")
    }
}
