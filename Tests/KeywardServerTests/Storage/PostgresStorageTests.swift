// Tests: the storage scenarios on PostgreSQL, and a statement timeout that migrations lift.
import XCTest

@testable import KeywardServer

/// The storage scenarios on PostgreSQL (a fresh schema per test; skipped without KEYWARD_TEST_POSTGRES_URL, required in CI). Keep in step with SQLiteStorageTests.
final class PostgresStorageTests: XCTestCase {
    private func run(migrated: Bool = true, _ body: (KeywardDatabase) async throws -> Void) async throws {
        try await StorageTestHarness.run(.postgres, migrated: migrated, body)
    }

    func testMigrateTwiceIsNoOp() async throws { try await run(migrated: false, DatabaseScenarios.migrateTwiceIsNoOp) }
    func testDeviceAttestedFlagIsDerivedFromTheSummary() async throws {
        try await run(migrated: false, DatabaseScenarios.deviceAttestedFlagIsDerivedFromTheSummary)
    }
    func testConcurrentMigratorsApplyOnce() async throws { try await run(migrated: false, DatabaseScenarios.concurrentMigratorsApplyOnce) }
    func testTransactionCommitsOrRollsBack() async throws { try await run(DatabaseScenarios.transactionCommitsOrRollsBack) }
    func testConcurrentTransactionsStayIsolated() async throws { try await run(DatabaseScenarios.concurrentTransactionsStayIsolated) }
    func testPingAnswers() async throws { try await run(DatabaseScenarios.pingAnswers) }

    /// A statement stuck behind a lock must not hold its connection, and the requests waiting on it, for ever;
    /// migrations lift the bound for their own transaction.
    func testStatementsHaveATimeoutExceptInMigrations() async throws {
        try await run { database in
            let setting = try await database.sql.raw("SHOW statement_timeout").first()?.decode(column: "statement_timeout", as: String.self)
            XCTAssertEqual(setting, "30s")
            do {
                try await database.transaction { session in
                    try await session.raw("SET LOCAL statement_timeout = 20").run()
                    try await session.raw("SELECT pg_sleep(1)").run()
                }
                XCTFail("the statement outlived its timeout")
            } catch {
                XCTAssertTrue(String(reflecting: error).contains("57014"), String(reflecting: error))
            }
        }
    }
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
