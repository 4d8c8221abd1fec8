// Tests: the event-loop task executor keeps tasks on its loop across awaits, and still finishes them after close.
import NIOCore
import NIOPosix
import Synchronization
import XCTest

@testable import KeywardServer

final class EventLoopTaskExecutorTests: XCTestCase {
    private var group: MultiThreadedEventLoopGroup!
    private var executor: EventLoopTaskExecutor!

    override func setUp() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        executor = EventLoopTaskExecutor(group.next())
    }

    override func tearDown() async throws {
        executor.close()
        try await group.shutdownGracefully()
    }

    private struct Closed: Error {}

    func testATaskPreferringTheExecutorRunsOnItsLoopAcrossAwaits() async throws {
        let loop = executor.eventLoop
        let other = MultiThreadedEventLoopGroup.singleton.next()
        let onLoop = await Task(executorPreference: executor) { () -> [Bool] in
            var seen = [loop.inEventLoop]
            // Resumed by another thread's completion: still back on the executor's loop.
            try? await other.submit {}.get()
            seen.append(loop.inEventLoop)
            await Task.yield()
            seen.append(loop.inEventLoop)
            return seen
        }.value
        XCTAssertEqual(onLoop, [true, true, true])
    }

    func testRunIsOnTheLoopFromAnywhere() async throws {
        let loop = executor.eventLoop
        let fromOutside = try await executor.run({ loop.inEventLoop }, closedError: Closed())
        XCTAssertTrue(fromOutside)
        let executor = executor!
        let fromInside = try await Task(executorPreference: executor) {
            try await executor.run({ loop.inEventLoop }, closedError: Closed())
        }.value
        XCTAssertTrue(fromInside)
    }

    func testAfterCloseWorkIsRefusedAndTasksStillFinish() async throws {
        executor.close()
        do {
            _ = try await executor.run({ 1 }, closedError: Closed())
            XCTFail("work was accepted after close")
        } catch is Closed {}
        // Without the fallback this task's jobs would be dropped and it would never finish.
        let loop = executor.eventLoop
        let ranOnLoop = await Task(executorPreference: executor) { () -> Bool in
            await Task.yield()
            return loop.inEventLoop
        }.value
        XCTAssertFalse(ranOnLoop)
    }

    func testGroupCommitWritesRunOnItsExecutor() async throws {
        let loop = executor.eventLoop
        let offLoop = Mutex(0)
        let commit = GroupCommit<Int, Bool>(maxGroup: 8, executor: executor) { items in
            if !loop.inEventLoop { offLoop.withLock { $0 += 1 } }
            return items.map { $0 % 2 == 0 }
        }
        let outcomes = await withTaskGroup(of: (Int, Bool).self) { tasks in
            for item in 0..<100 { tasks.addTask { (item, await commit.submit(item)) } }
            return await tasks.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
        }
        XCTAssertEqual(outcomes.count, 100)
        XCTAssertTrue(outcomes.allSatisfy { $0.value == ($0.key % 2 == 0) }, "each caller got its own item's outcome")
        XCTAssertEqual(offLoop.withLock { $0 }, 0, "every write ran on the executor's loop")
    }
}
