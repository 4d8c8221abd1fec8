// Tests: group commit batches concurrent writes, returns once written, and fails only a failed group's requests.
import Foundation
import Synchronization
import XCTest

@testable import KeywardServer

final class GroupCommitTests: XCTestCase {
    /// What the write function saw, and a gate that holds writes until the test opens it.
    private final class Recorder: Sendable {
        let writes = Mutex<[[Int]]>([])
        let written = Mutex<Set<Int>>([])
        let returnedBeforeWritten = Mutex<[Int]>([])
        let gate = Mutex<[CheckedContinuation<Void, Never>]?>([])
        /// Items of the writes held at the gate.
        let held = Mutex(0)

        func write(_ items: [Int]) async {
            await withCheckedContinuation { continuation in
                let wait = gate.withLock { waiting -> Bool in
                    guard waiting != nil else { return false }
                    waiting!.append(continuation)
                    held.withLock { $0 += items.count }
                    return true
                }
                if !wait { continuation.resume() }
            }
            writes.withLock { $0.append(items) }
            written.withLock { $0.formUnion(items) }
        }

        func open() {
            let waiting = gate.withLock { waiting -> [CheckedContinuation<Void, Never>] in
                defer { waiting = nil }
                return waiting ?? []
            }
            for continuation in waiting { continuation.resume() }
        }

        var pendingWrites: Int { gate.withLock { $0?.count ?? 0 } }
    }

    func testAloneAnItemIsWrittenAtOnceByItself() async {
        let recorder = Recorder()
        recorder.open()
        let commit = GroupCommit<Int, Void>(maxGroup: 8, write: recorder.write)
        await commit.submit(1)
        await commit.submit(2)
        XCTAssertEqual(recorder.writes.withLock { $0 }, [[1], [2]])
    }

    func testConcurrentItemsShareWritesAndReturnOnlyOnceWritten() async throws {
        let recorder = Recorder()
        let commit = GroupCommit<Int, Void>(maxGroup: 16, write: recorder.write)
        let count = 200
        await withTaskGroup(of: Void.self) { group in
            for item in 0..<count {
                group.addTask {
                    await commit.submit(item)
                    if !recorder.written.withLock({ $0.contains(item) }) { recorder.returnedBeforeWritten.withLock { $0.append(item) } }
                }
            }
            // The first write is held until every other item has queued behind it.
            while recorder.pendingWrites == 0 || commit.queuedCount + recorder.held.withLock({ $0 }) < count { await Task.yield() }
            XCTAssertEqual(recorder.pendingWrites, 1, "one write at a time")
            recorder.open()
        }
        let writes = recorder.writes.withLock { $0 }
        XCTAssertEqual(writes.flatMap { $0 }.sorted(), Array(0..<count), "every item written exactly once")
        XCTAssertTrue(writes.allSatisfy { (1...16).contains($0.count) }, "groups of 1...maxGroup: \(writes.map(\.count))")
        XCTAssertLessThanOrEqual(writes.count, 1 + (count - 1 + 15) / 16, "queued items were grouped: \(writes.map(\.count))")
        XCTAssertEqual(recorder.returnedBeforeWritten.withLock { $0 }, [], "no caller returned before its item was written")
    }

    func testSubmitAfterAQuietPeriodStartsANewWrite() async {
        let recorder = Recorder()
        recorder.open()
        let commit = GroupCommit<Int, Void>(maxGroup: 4, write: recorder.write)
        await withTaskGroup(of: Void.self) { group in
            for item in 0..<50 { group.addTask { await commit.submit(item) } }
        }
        await commit.submit(99)
        XCTAssertEqual(recorder.writes.withLock { $0.last }, [99])
        XCTAssertEqual(recorder.written.withLock { $0.count }, 51)
    }
}

/// The grouped replay writer when the table cannot be written: every request of the group gets the failure, and
/// the next group writes again.
final class GroupedReplayStoreFailureTests: XCTestCase {
    private final class FailingOnce: SingleUseStore, Sendable {
        let calls = Mutex(0)
        func recordOnce(scope: String, key: String, expiresAt: Date, now: Date) async throws -> Bool { true }
        func recordEachOnce(_ entries: [SingleUseEntry], now: Date) async throws -> [Bool] {
            let call = calls.withLock { $0 += 1; return $0 }
            if call == 1 { throw StoreError.unavailable("simulated outage") }
            return entries.map { _ in true }
        }
        func deleteExpired(now: Date) async throws -> Int { 0 }
    }

    func testAFailedWriteFailsItsRequestsOnly() async throws {
        let base = FailingOnce()
        let store = GroupedSingleUseStore(base: base)
        let entry = SingleUseEntry(scope: "s", key: "k", expiresAt: Date().addingTimeInterval(60))
        do {
            _ = try await store.recordEachOnce([entry], now: Date())
            XCTFail("the outage was not reported")
        } catch {
            XCTAssertEqual(error as? StoreError, .unavailable("simulated outage"))
        }
        let answer = try await store.recordEachOnce([entry], now: Date())
        XCTAssertEqual(answer, [true])
    }
}
