// Tests: the expired-row sweeper's loop keeps sweeping after errors and stops when cancelled.
import Foundation
import Logging
import XCTest

@testable import KeywardServer

/// The sweeper's loop, with in-memory stores (its SQL is covered by the engine scenarios).
final class ExpiredRowSweeperTests: XCTestCase {
    func testKeepsSweepingAfterErrorsAndStopsWhenCancelled() async throws {
        let replay = CountingReplayStore(failFirst: 2)
        let sweeper = ExpiredRowSweeper(
            sweeps: [.singleUse(replay), .signingKeys(CountingKeyStore())], clock: TestClock(StorageFixtures.t0),
            interval: .milliseconds(10), logger: Logger(label: "sweeper-test", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let task = Task { try await sweeper.run() }
        let deadline = ContinuousClock.now + .seconds(10)
        while replay.calls < 5, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        XCTAssertGreaterThanOrEqual(replay.calls, 5, "the sweeper stopped after a failed sweep")
        task.cancel()
        try await task.value  // returns instead of hanging or throwing: run() has ended, so no sweep can follow
    }
}

private final class CountingReplayStore: SingleUseStore, @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private let failFirst: Int

    init(failFirst: Int) { self.failFirst = failFirst }

    var calls: Int { lock.withLock { count } }

    func recordOnce(scope: String, key: String, expiresAt: Date, now: Date) async throws -> Bool { true }

    func recordEachOnce(_ entries: [SingleUseEntry], now: Date) async throws -> [Bool] { entries.map { _ in true } }

    func deleteExpired(now: Date) async throws -> Int {
        let call = lock.withLock { count += 1; return count }
        if call <= failFirst { throw StoreError.unavailable("simulated outage") }
        return 0
    }
}

private struct CountingKeyStore: SigningKeyStore {
    func insertKey(_ key: StoredSigningKey) async throws {}
    func publishedKeys(realm: String, now: Date) async throws -> [StoredSigningKey] { [] }
    func activeKey(realm: String) async throws -> StoredSigningKey? { nil }
    func rotate(realm: String, newKey: StoredSigningKey, retiredPublishUntil: Date) async throws {}
    func deleteUnpublishedKeys(now: Date) async throws -> Int { 0 }
}
