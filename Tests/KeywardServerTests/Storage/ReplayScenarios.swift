// Test support: storage scenarios for the single-use (replay) store and its sweeper, run on both database engines.
import Foundation
import Logging
import XCTest

@testable import KeywardServer

/// Replay store and the sweeper; each runs on both engines.
enum ReplayScenarios {
    static let t0 = StorageFixtures.t0

    static func recordOnceLifecycle(_ database: KeywardDatabase) async throws {
        try await recordOnceLifecycle(SQLSingleUseStore(database: database))
    }

    /// The same answers through the grouped writer the servers use.
    static func groupedStoreAnswersAsTheTableDoes(_ database: KeywardDatabase) async throws {
        try await recordOnceLifecycle(GroupedSingleUseStore(base: SQLSingleUseStore(database: database)))
        try await recordEachOnceDecidesPerEntry(GroupedSingleUseStore(base: SQLSingleUseStore(database: database)), scopes: "grouped")
    }

    static func recordOnceLifecycle(_ store: any SingleUseStore) async throws {
        let expiry = t0.storageShifted(60)

        try await StorageAssert.isTrue(await store.recordOnce(scope: "dpop", key: "jti-1", expiresAt: expiry, now: t0))
        try await StorageAssert.isFalse(await store.recordOnce(scope: "dpop", key: "jti-1", expiresAt: expiry.storageShifted(60), now: t0.storageShifted(1)))
        // Same key, other scope; other key, same scope.
        try await StorageAssert.isTrue(await store.recordOnce(scope: "host", key: "jti-1", expiresAt: expiry, now: t0))
        try await StorageAssert.isTrue(await store.recordOnce(scope: "dpop", key: "jti-2", expiresAt: expiry, now: t0))
        // The refused call wrote nothing: the entry still expires at `expiry`, so just before it is still a replay…
        try await StorageAssert.isFalse(await store.recordOnce(scope: "dpop", key: "jti-1", expiresAt: expiry, now: expiry.storageShifted(-0.001)))
        // …and at it the pair may be recorded again, for a new lifetime.
        let renewed = expiry.storageShifted(60)
        try await StorageAssert.isTrue(await store.recordOnce(scope: "dpop", key: "jti-1", expiresAt: renewed, now: expiry))
        try await StorageAssert.isFalse(await store.recordOnce(scope: "dpop", key: "jti-1", expiresAt: renewed, now: expiry.storageShifted(30)))
    }

    /// Several entries in one statement: each recorded or refused on its own, as separate calls would.
    static func recordEachOnceDecidesPerEntry(_ database: KeywardDatabase) async throws {
        try await recordEachOnceDecidesPerEntry(SQLSingleUseStore(database: database), scopes: "")
    }

    static func recordEachOnceDecidesPerEntry(_ store: any SingleUseStore, scopes prefix: String) async throws {
        let expiry = t0.storageShifted(60)
        let proof = SingleUseEntry(scope: prefix + "dpop:r", key: "k:j1", expiresAt: expiry)
        let host = SingleUseEntry(scope: prefix + "host-jti:r:i", key: "j1", expiresAt: expiry)
        try await StorageAssert.equal(await store.recordEachOnce([proof, host], now: t0), [true, true])
        try await StorageAssert.equal(await store.recordEachOnce([proof, host], now: t0.storageShifted(1)), [false, false])
        let fresh = SingleUseEntry(scope: prefix + "dpop:r", key: "k:j2", expiresAt: expiry)
        try await StorageAssert.equal(await store.recordEachOnce([fresh, host], now: t0.storageShifted(1)), [true, false])
        try await StorageAssert.isFalse(await store.recordOnce(scope: prefix + "dpop:r", key: "k:j2", expiresAt: expiry, now: t0.storageShifted(2)))
        // Expired entries may be taken again.
        try await StorageAssert.equal(await store.recordEachOnce([proof, host], now: expiry), [true, true])
        try await StorageAssert.equal(await store.recordEachOnce([], now: t0), [])
        // One key twice in one call: the first occurrence is recorded, the second is its replay.
        let twice = SingleUseEntry(scope: prefix + "dpop:r", key: "k:j3", expiresAt: expiry)
        try await StorageAssert.equal(await store.recordEachOnce([twice, fresh, twice], now: t0.storageShifted(3)), [true, false, false])
    }

    /// Found by tests/faults/races.py on two PostgreSQL nodes: each node's grouped writer sends the keys of its batch in
    /// arrival order, and two batches holding the same keys in opposite orders each waited for the other's row, until
    /// PostgreSQL broke the deadlock by failing one batch (every proof in it answered 503). Batches that overlap in
    /// opposite orders must all be decided, each key won exactly once.
    static func overlappingBatchesInOppositeOrdersAreAllDecided(_ database: KeywardDatabase) async throws {
        let store = SQLSingleUseStore(database: database)
        for round in 0..<20 {
            let entries = (0..<40).map { SingleUseEntry(scope: "dpop:deadlock", key: "r\(round)-k\($0)", expiresAt: t0.storageShifted(60)) }
            let answers = try await withThrowingTaskGroup(of: [Bool].self) { group in
                for batch in [entries, entries.reversed(), entries.shuffled(), entries.reversed()] {
                    group.addTask { try await store.recordEachOnce(Array(batch), now: t0) }
                }
                return try await group.reduce(into: [[Bool]]()) { $0.append($1) }
            }
            let wins = answers.map { $0.filter { $0 }.count }.reduce(0, +)
            XCTAssertEqual(wins, entries.count, "round \(round): every key won exactly once")
        }
    }

    static func concurrentRecordOnceHasOneWinner(_ database: KeywardDatabase) async throws {
        let store = SQLSingleUseStore(database: database)
        let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 {
                group.addTask { try await store.recordOnce(scope: "dpop", key: "same-jti", expiresAt: t0.storageShifted(60), now: t0) }
            }
            return try await group.reduce(into: 0) { count, won in count += won ? 1 : 0 }
        }
        XCTAssertEqual(wins, 1)
    }

    /// Requests racing through the grouped writer, several bringing the same keys in one group: each key is won
    /// once, by one request, and every request that brought a fresh key of its own gets it.
    static func groupedRequestsRacingKeepOneWinnerPerKey(_ database: KeywardDatabase) async throws {
        let store = GroupedSingleUseStore(base: SQLSingleUseStore(database: database))
        let expiry = t0.storageShifted(60)
        let answers = try await withThrowingTaskGroup(of: (Int, [Bool]).self) { group in
            for request in 0..<120 {
                group.addTask {
                    let shared = SingleUseEntry(scope: "host-jti:r:i", key: "jti-\(request % 10)", expiresAt: expiry)
                    let own = SingleUseEntry(scope: "dpop:r", key: "proof-\(request)", expiresAt: expiry)
                    return (request, try await store.recordEachOnce([own, shared], now: t0))
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        XCTAssertEqual(answers.count, 120)
        XCTAssertTrue(answers.values.allSatisfy { $0[0] }, "every request's own key is fresh")
        for shared in 0..<10 {
            let winners = answers.filter { $0.key % 10 == shared && $0.value[1] }
            XCTAssertEqual(winners.count, 1, "jti-\(shared) won by \(winners.keys.sorted())")
        }
    }

    /// The sweep walks the table in key order a few rows per statement. For each chunk size, 25 new rows in three
    /// scopes that share keys, live and expired ones alternating irregularly (a live row on a chunk boundary,
    /// expired rows in a tail shorter than a chunk): every expired row goes and every live one stays.
    static func sweepInChunksReachesEveryRow(_ database: KeywardDatabase) async throws {
        let replay = SQLSingleUseStore(database: database)
        let now = t0.storageShifted(100)
        for chunk in [1, 4, 5, 7, 24, 25, 26] {
            var expired: [SingleUseEntry] = []
            var live: [SingleUseEntry] = []
            for index in 0..<25 {
                let isLive = index % 4 == 0 || index % 7 == 3
                let entry = SingleUseEntry(
                    scope: ["dpop:r", "host-jti:r:i", "nonce"][index % 3], key: "c\(chunk)-k\(index / 3)",
                    expiresAt: isLive ? now.storageShifted(60) : now.storageShifted(-Double(index))
                )
                if isLive { live.append(entry) } else { expired.append(entry) }
            }
            try await StorageAssert.equal(await replay.recordEachOnce(expired + live, now: t0), Array(repeating: true, count: 25))
            try await StorageAssert.equal(await replay.deleteExpired(now: now, chunk: chunk), expired.count)
            // Live rows are still replays (judged at t0, so expiry cannot be what refuses them); swept ones are gone.
            try await StorageAssert.equal(await replay.recordEachOnce(live, now: t0), Array(repeating: false, count: live.count))
            try await StorageAssert.equal(await replay.recordEachOnce(expired, now: t0), Array(repeating: true, count: expired.count))
            // Nothing has expired at t0; at `now` the rows recorded again go again, leaving the live ones.
            try await StorageAssert.equal(await replay.deleteExpired(now: t0, chunk: chunk), 0)
            try await StorageAssert.equal(await replay.deleteExpired(now: now, chunk: chunk), expired.count)
        }
    }

    static func sweeperRemovesExpiredRowsOnly(_ database: KeywardDatabase) async throws {
        try await SQLRealmStore(database: database).createRealm(StorageFixtures.realm("r1"))
        let replay = SQLSingleUseStore(database: database)
        let keys = SQLSigningKeyStore(database: database)
        let now = t0.storageShifted(100)
        for (key, expires) in [("old", now.storageShifted(-10)), ("edge", now), ("fresh", now.storageShifted(10))] {
            try await StorageAssert.isTrue(await replay.recordOnce(scope: "s", key: key, expiresAt: expires, now: t0))
        }
        try await keys.insertKey(StorageFixtures.key(realm: "r1", kid: "active"))
        try await keys.insertKey(StorageFixtures.key(realm: "r1", kid: "unpublished", status: .retired, publishUntil: now))
        try await keys.insertKey(StorageFixtures.key(realm: "r1", kid: "published", status: .retired, publishUntil: now.storageShifted(1)))

        let sweeper = ExpiredRowSweeper(
            sweeps: [.singleUse(replay), .signingKeys(keys)], clock: TestClock(now), logger: StorageTestHarness.logger
        )
        try await StorageAssert.equal(await sweeper.sweepOnce(), ExpiredRowSweeper.Counts(["replayEntries": 2, "signingKeys": 1]))
        try await StorageAssert.equal(await sweeper.sweepOnce(), ExpiredRowSweeper.Counts(["replayEntries": 0, "signingKeys": 0]))

        // The live entry survived (still a replay, judged at an earlier time so expiry cannot be what refuses it).
        try await StorageAssert.isFalse(await replay.recordOnce(scope: "s", key: "fresh", expiresAt: now.storageShifted(60), now: t0))
        // The swept ones are gone (recording them again succeeds even judged at t0).
        try await StorageAssert.isTrue(await replay.recordOnce(scope: "s", key: "old", expiresAt: now.storageShifted(60), now: t0))
        try await StorageAssert.equal(await keys.publishedKeys(realm: "r1", now: t0).map(\.kid), ["published", "active"])
    }
}
