// Naming Keyward's PostgreSQL statements so each connection parses and plans them only once.
import Logging
import PostgresKit
import SQLKit
import Synchronization

/// Names the statements Keyward runs on PostgreSQL so each connection parses and plans a statement once and then
/// only binds and executes it.
///
/// An unnamed statement is parsed and planned by the server on every execution; for Keyward's short statements
/// that is most of PostgreSQL's work. A name stands for one SQL text with one list of parameter types (a NULL
/// parameter has no type, so it is part of the key). Only DML is named — schema changes, transaction control and
/// LISTEN stay unnamed — and the number of names is capped, so a connection never holds more than `capacity`
/// prepared statements whatever SQL it is given.
final class PostgresStatementCache: Sendable {
    static let capacity = 512

    /// One SQL text with one list of parameter types (nil: a NULL, which has no type).
    private struct Key: Hashable {
        let sql: String
        let parameterTypes: [PostgresDataType?]
    }

    private struct State {
        var names: [Key: String] = [:]
        /// Texts the server refused to prepare (a missing table during a migration, say): PostgresNIO remembers a
        /// failed preparation for the connection's lifetime, so such a text is run unnamed from then on.
        var refused: Set<Key> = []
        /// Names are never reused: a connection may still hold an earlier text under a refused name.
        var issued = 0
    }

    private let state = Mutex(State())

    /// The statement name for this text and these parameter types, or nil when it is to run unnamed.
    func name(sql: String, parameterTypes: [PostgresDataType?]) -> String? {
        let key = Key(sql: sql, parameterTypes: parameterTypes)
        return state.withLock { state in
            if let name = state.names[key] { return name }
            guard state.issued < Self.capacity, !state.refused.contains(key), Self.isNameable(sql) else { return nil }
            state.issued += 1
            let name = "keyward_\(state.issued)"
            state.names[key] = name
            return name
        }
    }

    /// Takes the name away from a text the server refused to prepare, so later executions of it run unnamed.
    func refuse(name: String) {
        state.withLock { state in
            guard let key = state.names.first(where: { $0.value == name })?.key else { return }
            state.names[key] = nil
            state.refused.insert(key)
        }
    }

    static func isNameable(_ sql: String) -> Bool {
        let verb = sql.drop { $0.isWhitespace }.prefix { $0.isLetter }.uppercased()
        return ["SELECT", "INSERT", "UPDATE", "DELETE", "WITH"].contains(verb)
    }
}

/// `PostgresPreparedStatement` for SQL known only at run time. PostgresNIO reads a prepared statement's name and
/// text from the type; this type reads them from a task-local that `PostgresSessionSQLDatabase` binds around
/// the one `execute` call, so one type serves every statement.
struct RuntimePreparedStatement: PostgresPreparedStatement {
    struct Text: Sendable {
        let name: String
        let sql: String
    }

    @TaskLocal static var current: Text?

    static var name: String { text.name }
    static var sql: String { text.sql }

    private static var text: Text {
        guard let current else { preconditionFailure("RuntimePreparedStatement used outside PostgresSessionSQLDatabase") }
        return current
    }

    typealias Row = PostgresRow

    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}

/// `SQLDatabase` over one leased connection: named prepared statements where `PostgresStatementCache` gives a
/// name, otherwise PostgresKit's unnamed statements.
///
/// With `confirmsCommits` (a statement outside a transaction), a statement that writes is answered only once
/// PostgreSQL has committed it. PostgresNIO ends a statement at its CommandComplete, but an implicit transaction
/// commits later, at the protocol's Sync: a backend stopped in between (a fast or immediate shutdown) still sends
/// the rows and CommandComplete it had buffered, then rolls back. So an approval could be acknowledged and be gone
/// after the restart (found by tests/faults/pgrestart.py). A second statement on the same connection is sent only
/// after the first one's ReadyForQuery, which follows the commit: its answer confirms it.
struct PostgresSessionSQLDatabase: SQLDatabase {
    let connection: PostgresConnection
    let statements: PostgresStatementCache?
    let logger: Logger
    let queryLogLevel: Logger.Level?
    var confirmsCommits = false

    private var unnamed: any SQLDatabase { connection.sql(queryLogLevel: queryLogLevel, logger: logger) }

    var eventLoop: any EventLoop { connection.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { nil }
    var dialect: any SQLDialect { PostgresDialect() }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        let (sql, binds) = serialize(query)
        try await run(query, sql: sql, binds: binds, onRow)
        if confirmsCommits, Self.mayWrite(sql) {
            try await confirmCommitted()
        }
    }

    /// Every statement but a plain `SELECT`; a `SELECT` from one of Keyward's functions (`keyward_…`) writes too.
    static func mayWrite(_ sql: String) -> Bool {
        !sql.hasPrefix("SELECT") || sql.contains("keyward_")
    }

    private func run(
        _ query: any SQLExpression, sql: String, binds: [any Encodable & Sendable], _ onRow: @escaping @Sendable (any SQLRow) -> Void
    ) async throws {
        guard let statements, let (bindings, types) = Self.bindings(binds), let name = statements.name(sql: sql, parameterTypes: types) else {
            return try await unnamed.execute(sql: query, onRow)
        }
        if let queryLogLevel {
            logger.log(level: queryLogLevel, "Executing query", metadata: ["sql": .string(sql), "statement": .string(name)])
        }
        do {
            try await RuntimePreparedStatement.$current.withValue(.init(name: name, sql: sql)) {
                for try await row in try await connection.execute(RuntimePreparedStatement(bindings: bindings), logger: logger) {
                    onRow(row.sql())
                }
            }
        } catch let error as PSQLError where Self.isPreparationRefusal(error) {
            statements.refuse(name: name)
            throw error
        }
    }

    /// Waits for the previous statement's commit (see the type's comment). Its outcome is unknown when this fails.
    private func confirmCommitted() async throws {
        do {
            _ = try await connection.query("SELECT 1", logger: logger).collect()
        } catch {
            throw StoreError.unavailable("PostgreSQL did not confirm a commit: \(String(reflecting: error))")
        }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await closure(self)
    }

    /// PostgresNIO's binary encoding of the binds and their types (nil for NULL); nil when a bind has no direct
    /// PostgreSQL encoding, in which case the statement goes through PostgresKit's general translation, unnamed.
    private static func bindings(_ binds: [any Encodable & Sendable]) -> (PostgresBindings, [PostgresDataType?])? {
        var bindings = PostgresBindings(capacity: binds.count)
        var types: [PostgresDataType?] = []
        types.reserveCapacity(binds.count)
        for bind in binds {
            if let optional = bind as? any OptionalBind, optional.isNone {
                bindings.appendNull()
                types.append(nil)
            } else if let value = bind as? any PostgresThrowingDynamicTypeEncodable {
                guard (try? bindings.append(value, context: .default)) != nil else { return nil }
                types.append(value.psqlType)
            } else {
                return nil
            }
        }
        return (bindings, types)
    }

    /// Errors of preparation itself (SQLSTATE classes 42: syntax or an unknown table or column, 0A: not supported,
    /// 26: statement name), which PostgresNIO would repeat for the statement's name on this connection.
    private static func isPreparationRefusal(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return ["42", "0A", "26"].contains(String(state.prefix(2)))
    }
}

/// Tells a NULL bind from a value: a bind arrives as an existential, and a cast to a protocol looks through
/// `Optional.some` but cannot match `Optional.none`.
private protocol OptionalBind {
    var isNone: Bool { get }
}

extension Optional: OptionalBind {
    var isNone: Bool { self == nil }
}
