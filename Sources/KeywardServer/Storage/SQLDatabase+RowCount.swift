// Counting the rows a statement touched through its RETURNING rows, the same way on SQLite and PostgreSQL.
import Synchronization
import SQLKit

extension SQLDatabase {
    /// Runs a statement and counts the rows it returns. Used with `… RETURNING` to learn how many rows
    /// were touched in one statement on both engines (SQLKit reports no affected-row counts).
    func countingRows(_ query: SQLQueryString) async throws -> Int {
        let counter = StorageRowCounter()
        try await execute(sql: query) { _ in counter.count.add(1, ordering: .relaxed) }
        return counter.count.load(ordering: .relaxed)
    }
}

/// Shares an atomic count with the row callback (an `Atomic` cannot be captured directly).
private final class StorageRowCounter: Sendable {
    let count = Atomic<Int>(0)
}
