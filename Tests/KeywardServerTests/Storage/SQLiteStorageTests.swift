// Tests: the storage scenarios on SQLite, each on a temporary database file.
import XCTest

@testable import KeywardServer

/// The storage scenarios on SQLite (a temporary file per test). Keep in step with PostgresStorageTests.
final class SQLiteStorageTests: XCTestCase {
    private func run(migrated: Bool = true, _ body: (KeywardDatabase) async throws -> Void) async throws {
        try await StorageTestHarness.run(.sqlite, migrated: migrated, body)
    }

    func testMigrateTwiceIsNoOp() async throws { try await run(migrated: false, DatabaseScenarios.migrateTwiceIsNoOp) }
    func testDeviceAttestedFlagIsDerivedFromTheSummary() async throws {
        try await run(migrated: false, DatabaseScenarios.deviceAttestedFlagIsDerivedFromTheSummary)
    }
    func testConcurrentMigratorsApplyOnce() async throws { try await run(migrated: false, DatabaseScenarios.concurrentMigratorsApplyOnce) }
    func testTransactionCommitsOrRollsBack() async throws { try await run(DatabaseScenarios.transactionCommitsOrRollsBack) }
    func testConcurrentTransactionsStayIsolated() async throws { try await run(DatabaseScenarios.concurrentTransactionsStayIsolated) }
    func testPingAnswers() async throws { try await run(DatabaseScenarios.pingAnswers) }
    func testRealmStore() async throws { try await run(AccountScenarios.realmStore) }
    func testClientStore() async throws { try await run(AccountScenarios.clientStore) }
    func testUserStore() async throws { try await run(AccountScenarios.userStore) }
    func testSigningKeyInsertAndQuery() async throws { try await run(SigningKeyScenarios.insertAndQuery) }
    func testSigningKeyRotateSwapsAtomically() async throws { try await run(SigningKeyScenarios.rotateSwapsAtomically) }
    func testDeleteUnpublishedKeys() async throws { try await run(SigningKeyScenarios.deleteUnpublishedKeys) }
    func testRecordOnceLifecycle() async throws { try await run(ReplayScenarios.recordOnceLifecycle) }
    func testConcurrentRecordOnceHasOneWinner() async throws { try await run(ReplayScenarios.concurrentRecordOnceHasOneWinner) }
    func testRecordEachOnceDecidesPerEntry() async throws { try await run(ReplayScenarios.recordEachOnceDecidesPerEntry) }
    func testOverlappingBatchesInOppositeOrdersAreAllDecided() async throws { try await run(ReplayScenarios.overlappingBatchesInOppositeOrdersAreAllDecided) }
    func testGroupedStoreAnswersAsTheTableDoes() async throws { try await run(ReplayScenarios.groupedStoreAnswersAsTheTableDoes) }
    func testGroupedRequestsRacingKeepOneWinnerPerKey() async throws { try await run(ReplayScenarios.groupedRequestsRacingKeepOneWinnerPerKey) }
    func testSweeperRemovesExpiredRowsOnly() async throws { try await run(ReplayScenarios.sweeperRemovesExpiredRowsOnly) }
    func testSweepInChunksReachesEveryRow() async throws { try await run(ReplayScenarios.sweepInChunksReachesEveryRow) }
}
