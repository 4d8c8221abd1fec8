import Logging
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

    var logger: Logger { statements.logger }
    var eventLoop: any EventLoop { statements.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { statements.version }
    var dialect: any SQLDialect { statements.dialect }
    var queryLogLevel: Logger.Level? { statements.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        statements.execute(sql: query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await statements.execute(sql: query, onRow)
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await gate.withGate { try await closure(sessions) }
    }
}
