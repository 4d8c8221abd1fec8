import Logging
import SQLKit
import SQLiteKit

/// The `SQLDatabase` handed to stores on SQLite: every statement passes the connection's gate, and
/// `withSession` keeps the gate for the whole closure so transactions are never interleaved.
///
/// Inside `withSession` use only the database passed to the closure; going back through this wrapper
/// would wait for the gate the session itself holds.
struct SerializedSQLiteDatabase: SQLDatabase {
    let connection: any SQLDatabase
    let gate: SQLiteStatementGate

    var logger: Logger { connection.logger }
    var eventLoop: any EventLoop { connection.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { connection.version }
    var dialect: any SQLDialect { connection.dialect }
    var queryLogLevel: Logger.Level? { connection.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await gate.withGate { try await connection.execute(sql: query, onRow) }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await gate.withGate { try await closure(connection) }
    }
}
