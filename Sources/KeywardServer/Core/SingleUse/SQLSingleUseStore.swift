// Core's single-use records in the replay_entries table (its name since migration 1): a (scope, key) with an expiry,
// recorded atomically and swept in key order.
import Foundation
import SQLKit

public struct SQLSingleUseStore: SingleUseStore {
    let database: KeywardDatabase

    public init(database: KeywardDatabase) {
        self.database = database
    }

    /// One statement, so concurrent callers cannot both win: the insert claims a new pair; on conflict the
    /// row is taken over only if it has expired; RETURNING yields a row exactly when this call wrote one.
    public func recordOnce(scope: String, key: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await StoreErrorMapping.mapping("recordOnce") {
            let written = try await database.sql.countingRows("""
                INSERT INTO replay_entries (scope, entry_key, expires_at)
                VALUES (\(bind: scope), \(bind: key), \(bind: StorageTime.milliseconds(expiresAt)))
                ON CONFLICT (scope, entry_key) DO UPDATE SET expires_at = excluded.expires_at
                WHERE replay_entries.expires_at <= \(bind: StorageTime.milliseconds(now))
                RETURNING 1 AS recorded
                """)
            return written > 0
        }
    }

    /// A key that appears twice is sent once and only its first occurrence can be recorded, as with separate calls
    /// (PostgreSQL refuses an upsert that touches one row twice, and SQLite would have answered both as recorded).
    /// The rows are sent in key order: PostgreSQL locks them in the order given, and two batches sharing keys in
    /// opposite orders (two nodes' grouped writers, racers presenting one proof to both) would each wait for the
    /// other until it failed one as a deadlock.
    public func recordEachOnce(_ entries: [SingleUseEntry], now: Date) async throws -> [Bool] {
        guard !entries.isEmpty else { return [] }
        var unique: [SingleUseEntry] = []
        var seen: Set<Name> = []
        let isFirst = entries.map { entry in
            guard seen.insert(Name(entry)).inserted else { return false }
            unique.append(entry)
            return true
        }
        unique.sort { ($0.scope, $0.key) < ($1.scope, $1.key) }
        let values = unique.map { entry in
            SQLQueryString("(\(bind: entry.scope), \(bind: entry.key), \(bind: StorageTime.milliseconds(entry.expiresAt)))")
        }
        let recorded = try await StoreErrorMapping.mapping("recordEachOnce") {
            Set(try await database.sql.raw("""
                INSERT INTO replay_entries (scope, entry_key, expires_at) VALUES \(values.joined(separator: ", "))
                ON CONFLICT (scope, entry_key) DO UPDATE SET expires_at = excluded.expires_at
                WHERE replay_entries.expires_at <= \(bind: StorageTime.milliseconds(now))
                RETURNING scope, entry_key
                """).all().map(Name.init(row:)))
        }
        return zip(entries, isFirst).map { entry, first in first && recorded.contains(Name(entry)) }
    }

    /// A row's identity, (scope, key).
    fileprivate struct Name: Hashable {
        let scope: String
        let key: String
    }

    /// Rows looked at per sweep statement: each one stays well under a millisecond, so the writes queued behind it
    /// barely wait, however large the table.
    static let sweepChunk = 1000

    public func deleteExpired(now: Date) async throws -> Int {
        try await deleteExpired(now: now, chunk: Self.sweepChunk)
    }

    /// Walks the table in key order, `chunk` rows per statement, deleting the expired ones; a key recorded behind
    /// the walk waits for the next sweep. There is no index on the expiry: on SQLite, keys expiring in the same
    /// second sort by key in it, so every recorded key cost a random page of that index as well as of the table's
    /// (a third of a replay write); scanning costs less than deleting through it did.
    func deleteExpired(now: Date, chunk: Int) async throws -> Int {
        precondition(chunk > 0)
        let expiry = StorageTime.milliseconds(now)
        var after: Name?
        var deleted = 0
        while true {
            let last = try await StoreErrorMapping.mapping("deleteExpired") {
                try await database.sql.raw("""
                    SELECT scope, entry_key FROM replay_entries WHERE \(Self.after(after))
                    ORDER BY scope, entry_key LIMIT 1 OFFSET \(bind: chunk - 1)
                    """).first().map(Name.init(row:))
            }
            deleted += try await StoreErrorMapping.mapping("deleteExpired") {
                try await database.sql.countingRows("""
                    DELETE FROM replay_entries
                    WHERE \(chunkRows(after: after, through: last, chunk: chunk)) AND expires_at <= \(bind: expiry)
                    RETURNING 1 AS deleted
                    """)
            }
            guard let last else { return deleted }
            after = last
        }
    }

    /// The rows of one chunk. SQLite deletes the key range directly, in half the time of the subquery (measured:
    /// 0.26 against 0.66 s for 600,000 rows); PostgreSQL estimates a row-value range from `scope` alone (a few
    /// values) and might scan the table for it, so there the chunk's keys come from an ordered, limited scan of
    /// the key and it deletes by key whatever its estimate.
    private func chunkRows(after: Name?, through last: Name?, chunk: Int) -> SQLQueryString {
        let upTo = last.map { "(scope, entry_key) <= (\(bind: $0.scope), \(bind: $0.key))" } ?? SQLQueryString("TRUE")
        let range: SQLQueryString = "\(Self.after(after)) AND \(upTo)"
        switch database.engine {
        case .sqlite:
            return range
        case .postgres:
            return """
                (scope, entry_key) IN (
                    SELECT scope, entry_key FROM replay_entries WHERE \(range) ORDER BY scope, entry_key LIMIT \(bind: chunk)
                )
                """
        }
    }

    private static func after(_ name: Name?) -> SQLQueryString {
        name.map { "(scope, entry_key) > (\(bind: $0.scope), \(bind: $0.key))" } ?? "TRUE"
    }
}

extension SQLSingleUseStore.Name {
    init(_ entry: SingleUseEntry) {
        self.init(scope: entry.scope, key: entry.key)
    }

    init(row: any SQLRow) throws {
        self.init(scope: try row.decode(column: "scope", as: String.self), key: try row.decode(column: "entry_key", as: String.self))
    }
}
