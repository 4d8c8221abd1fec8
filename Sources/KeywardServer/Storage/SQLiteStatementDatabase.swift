// The statement-keeping SQLite connection as an SQLKit database, with SQLiteKit's dialect and value coding.
import CKeywardSQLite
import Foundation
import Logging
import NIOCore
import SQLKit
import SQLiteKit
import SQLiteNIO

/// `SQLiteStatementConnection` as SQLKit's `SQLDatabase`: SQLiteKit's dialect, and its encoder and decoder for
/// values, so a bind or a column means what it meant through SQLiteKit.
struct SQLiteStatementDatabase: SQLDatabase {
    let connection: SQLiteStatementConnection
    let logger: Logger
    let eventLoop: any EventLoop
    let queryLogLevel: Logger.Level?
    var dialect: any SQLDialect { SQLiteDialect() }

    private static let encoder = SQLiteDataEncoder()

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await execute(sql: query, onRow) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        let (sql, binds) = serialize(query)
        if let queryLogLevel {
            logger.log(level: queryLogLevel, "Executing query", metadata: ["sql": .string(sql), "binds": .array(binds.map { .string("\($0)") })])
        }
        let values = try binds.map { try Self.encoder.encode($0) }
        try await connection.execute(sql, values) { onRow($0) }
    }

    /// Statements on this connection are single statements; `SerializedSQLiteDatabase` runs sessions on its other
    /// connection.
    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await closure(self)
    }
}

/// One row of a statement's result, for SQLKit.
struct SQLiteStatementRow: SQLRow {
    /// A statement's column names, shared by its rows.
    final class Columns: Sendable {
        let names: [String]
        let offsets: [String: Int]
        private let utf8Names: [[UInt8]]

        init(names: [String]) {
            self.names = names
            // The first of two equal names wins, as in SQLiteNIO.
            offsets = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            utf8Names = names.map { Array($0.utf8) }
        }

        /// Whether `statement`'s result has these columns, in this order.
        func matches(_ statement: OpaquePointer, count: Int) -> Bool {
            guard count == utf8Names.count else { return false }
            for (index, name) in utf8Names.enumerated() {
                guard let current = sqlite_nio_sqlite3_column_name(statement, Int32(index)) else { return false }
                let matched = name.withUnsafeBufferPointer { stored in
                    stored.count == strlen(current) && (stored.isEmpty || memcmp(stored.baseAddress!, current, stored.count) == 0)
                }
                guard matched else { return false }
            }
            return true
        }
    }

    struct MissingColumn: Error, CustomStringConvertible {
        let column: String
        var description: String { "no column '\(column)' in the row" }
    }

    let columns: Columns
    let values: [SQLiteData]

    private static let decoder = SQLiteDataDecoder()

    var allColumns: [String] { columns.names }

    func contains(column: String) -> Bool { columns.offsets[column] != nil }

    func decodeNil(column: String) throws -> Bool {
        guard let offset = columns.offsets[column] else { return true }
        return values[offset] == .null
    }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let offset = columns.offsets[column] else { throw MissingColumn(column: column) }
        // Text read as a String is the common read, and what the decoder answers for it too; its conformance
        // lookups cost more than the read (the replay writes decode two per key on the statement thread).
        if D.self == String.self, case .text(let text) = values[offset] { return text as! D }
        return try Self.decoder.decode(D.self, from: values[offset])
    }
}
