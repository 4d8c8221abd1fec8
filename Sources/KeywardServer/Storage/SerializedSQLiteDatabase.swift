// The SQLite database stores use: concurrent single statements, transactions alone behind a gate.
import Logging
import SQLiteNIO
import Synchronization
import SQLKit
import SQLiteKit

/// The `SQLDatabase` handed to stores on SQLite. Single statements run on the statement connection,
/// concurrently; `withSession` holds the gate of the session connection for the whole closure, so a
/// transaction's statements are never interleaved with another task's.
///
/// Inside `withSession` use only the database passed to the closure; going back through this wrapper
/// would run outside the transaction (and wait for its write lock).
struct SerializedSQLiteDatabase: SQLDatabase {
    let statements: any SQLDatabase
    let sessions: any SQLDatabase
    let gate: SQLiteStatementGate
    /// Set when the backend closes: the connections' threads are gone, so a late statement gets a clear
    /// `unavailable` instead of the thread pool's cancellation.
    let closed: AtomicFlag

    static let closedError = StoreError.unavailable("the SQLite database is closed")

    var logger: Logger { statements.logger }
    var eventLoop: any EventLoop { statements.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { statements.version }
    var dialect: any SQLDialect { statements.dialect }
    var queryLogLevel: Logger.Level? { statements.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        guard !closed.isSet else { return eventLoop.makeFailedFuture(Self.closedError) }
        return statements.execute(sql: query, onRow)
    }

    /// A write that meets another connection's write lock (a transaction on the session connection, another
    /// process) can be refused at once instead of waiting: SQLITE_BUSY with a stale snapshot, or during recovery.
    /// Nothing was written or returned then, so the statement is simply run again.
    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        var attempt = 0
        while true {
            guard !closed.isSet else { throw Self.closedError }
            let delivered = AtomicFlag()
            do {
                try await statements.execute(sql: query) { row in
                    delivered.set()
                    onRow(row)
                }
                return
            } catch let error as SQLiteStatementError where error.isBusy && !delivered.isSet && attempt < Self.busyRetries {
                attempt += 1
                try await Task.sleep(for: .milliseconds(attempt))
            }
        }
    }

    static let busyRetries = 25


    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        guard !closed.isSet else { throw Self.closedError }
        return try await gate.withGate { try await closure(sessions) }
    }
}

/// A one-way flag shared across threads: whether the backend has closed, whether a statement has delivered rows.
final class AtomicFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}
