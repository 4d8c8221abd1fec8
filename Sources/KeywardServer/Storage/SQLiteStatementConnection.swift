// The SQLite connection single statements run on, on its own thread, keeping compiled statements for reuse.
import CKeywardSQLite
import Logging
import NIOCore
import NIOPosix
import SQLiteNIO

/// The SQLite connection single statements run on, which keeps each statement it has compiled for the next time
/// the same SQL comes (`StatementCache`).
///
/// SQLiteNIO compiles every statement anew and finalizes it after one run; compiling was an eighth of the server's
/// CPU on a provider sign-in (perf: `sqlite3Prepare`), the statement with a trigger behind it costing 30 µs each
/// time. Keyward's statements are few and fixed, so kept statements cover nearly all of them.
///
/// The handle is touched only on the connection's own single thread (`executor`'s event loop), one job at a
/// time: it is opened without SQLite's per-connection mutex. A task running on that thread (`executor`) runs
/// its statements there at once, without a hop; `GroupCommit`'s writers do. The connection opens its own handle on
/// the SQLite that sqlite-nio compiles in (CKeywardSQLite says why it must be that one).
final class SQLiteStatementConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    private let threadGroup: MultiThreadedEventLoopGroup
    /// Runs tasks on the connection's thread, where its statements need no hop.
    let executor: EventLoopTaskExecutor
    /// Only on the connection's thread.
    private var cache: StatementCache
    /// Only on the connection's thread: how often SQLite compiled a kept statement again (tests).
    private var recompiled = 0
    /// Only on the connection's thread: set by `close`, after which the handle is gone (jobs queued behind `close` see it).
    private var closed = false
    /// Set by the first `close`, which stops the thread.
    private let stopped = AtomicFlag()

    private init(handle: OpaquePointer, threadGroup: MultiThreadedEventLoopGroup, cacheCapacity: Int) {
        self.handle = handle
        self.threadGroup = threadGroup
        executor = EventLoopTaskExecutor(threadGroup.next())
        cache = StatementCache(capacity: cacheCapacity)
    }

    /// Opens `path` (created if missing) on a thread of its own and runs `setup` (PRAGMAs) on it.
    static func open(path: String, cacheCapacity: Int = 256, setup: [String]) async throws -> SQLiteStatementConnection {
        let threadGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            return try await open(path: path, threadGroup: threadGroup, cacheCapacity: cacheCapacity, setup: setup)
        } catch {
            try? await threadGroup.shutdownGracefully()
            throw error
        }
    }

    private static func open(
        path: String, threadGroup: MultiThreadedEventLoopGroup, cacheCapacity: Int, setup: [String]
    ) async throws -> SQLiteStatementConnection {
        try await threadGroup.next().submit {
            sqlite_nio_sqlite3_initialize()
            var handle: OpaquePointer?
            let flags = KEYWARD_SQLITE_OPEN_READWRITE | KEYWARD_SQLITE_OPEN_CREATE | KEYWARD_SQLITE_OPEN_NOMUTEX | KEYWARD_SQLITE_OPEN_EXRESCODE
            let opened = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
            guard let handle else { throw SQLiteStatementError(code: opened, message: "cannot open \(path)") }
            let connection = SQLiteStatementConnection(handle: handle, threadGroup: threadGroup, cacheCapacity: cacheCapacity)
            guard opened == KEYWARD_SQLITE_OK else {
                let error = connection.lastError(opened)
                sqlite_nio_sqlite3_close_v2(handle)
                throw error
            }
            do {
                // A kept statement must stay compiled. Without the query planner stability guarantee, SQLite marks a
                // statement for recompiling whenever new values are bound to parameters its plan looked at (a
                // parameter compared with a joined column, a LEFT JOIN's ON term): the e-mail holders' query and the
                // phones-and-settings query were compiled again on every run.
                let kept = keyward_sqlite_keep_plans(handle)
                guard kept == KEYWARD_SQLITE_OK else { throw connection.lastError(kept) }
                for statement in setup { try connection.runOnThread(statement, [], keep: false) { _ in } }
            } catch {
                sqlite_nio_sqlite3_close_v2(handle)
                throw error
            }
            return connection
        }.get()
    }

    /// Runs `sql` with `binds`, handing each row to `onRow` on the connection's thread.
    /// On the connection's thread (a task on `executor`), at once; from anywhere else, queued to it.
    func execute(_ sql: String, _ binds: [SQLiteData], onRow: @escaping @Sendable (SQLiteStatementRow) -> Void) async throws {
        try await onThread {
            guard !self.closed else { throw StoreError.unavailable("the SQLite database is closed") }
            try self.runOnThread(sql, binds, keep: true, onRow: onRow)
        }
    }

    /// How many compiled statements are kept (tests).
    func keptStatements() async throws -> Int {
        try await onThread { self.cache.count }
    }

    /// How often SQLite has compiled a kept statement again, after a schema change or new values (tests).
    func recompilations() async throws -> Int {
        try await onThread { self.recompiled }
    }

    /// Finalizes the kept statements, closes the handle and stops the thread. Statements after it are refused.
    func close() async throws {
        guard !stopped.isSet else { return }
        stopped.set()
        try await onThread {
            guard !self.closed else { return }
            self.closed = true
            self.cache.removeAll()
            sqlite_nio_sqlite3_close_v2(self.handle)
        }
        executor.close()
        try await threadGroup.shutdownGracefully()
    }

    private func onThread<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await executor.run(work, closedError: StoreError.unavailable("the SQLite database is closed"))
    }

    private func runOnThread(_ sql: String, _ binds: [SQLiteData], keep: Bool, onRow: (SQLiteStatementRow) -> Void) throws {
        let prepared = try cache.statement(for: sql, keep: keep) { try compile(sql, persistent: keep) }
        defer {
            sqlite_nio_sqlite3_reset(prepared.handle)
            sqlite_nio_sqlite3_clear_bindings(prepared.handle)
            if !keep { sqlite_nio_sqlite3_finalize(prepared.handle) }
        }
        for (offset, value) in binds.enumerated() {
            let code = bind(value, at: Int32(offset + 1), to: prepared.handle)
            guard code == KEYWARD_SQLITE_OK else { throw lastError(code) }
        }
        var columns: SQLiteStatementRow.Columns?
        defer { recompiled += Int(sqlite_nio_sqlite3_stmt_status(prepared.handle, KEYWARD_SQLITE_STMTSTATUS_REPREPARE, 1)) }
        while true {
            let code = sqlite_nio_sqlite3_step(prepared.handle)
            if code == KEYWARD_SQLITE_DONE { return }
            guard code == KEYWARD_SQLITE_ROW else { throw lastError(code) }
            let rowColumns = columns ?? prepared.currentColumns()
            columns = rowColumns
            onRow(SQLiteStatementRow(columns: rowColumns, values: try rowColumns.names.indices.map { try column(Int32($0), of: prepared.handle) }))
        }
    }

    private func compile(_ sql: String, persistent: Bool) throws -> StatementCache.Prepared {
        var statement: OpaquePointer?
        let flags = persistent ? UInt32(KEYWARD_SQLITE_PREPARE_PERSISTENT) : 0
        let code = sqlite_nio_sqlite3_prepare_v3(handle, sql, -1, flags, &statement, nil)
        guard code == KEYWARD_SQLITE_OK, let statement else { throw lastError(code) }
        return .init(handle: statement)
    }

    private func bind(_ value: SQLiteData, at index: Int32, to statement: OpaquePointer) -> Int32 {
        let tooBig: Int32 = 18  // SQLITE_TOOBIG: the C calls take an int length
        switch value {
        case .integer(let integer):
            return sqlite_nio_sqlite3_bind_int64(statement, index, Int64(integer))
        case .float(let double):
            return sqlite_nio_sqlite3_bind_double(statement, index, double)
        case .text(let text):
            guard let length = Int32(exactly: text.utf8.count) else { return tooBig }
            return text.withCString { keyward_sqlite_bind_text(statement, index, $0, length) }
        case .blob(let buffer):
            // An empty blob is bound as X'', not NULL: SQLite reads a null pointer as NULL.
            return buffer.withUnsafeReadableBytes { bytes in
                guard let length = Int32(exactly: bytes.count) else { return tooBig }
                return keyward_sqlite_bind_blob(statement, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), length)
            }
        case .null:
            return sqlite_nio_sqlite3_bind_null(statement, index)
        }
    }

    /// One column of the current row. Text is read to its length (SQLiteNIO stops at a NUL). A null pointer for a
    /// value that has bytes means SQLite ran out of memory: an error, never an empty value.
    private func column(_ index: Int32, of statement: OpaquePointer) throws -> SQLiteData {
        switch sqlite_nio_sqlite3_column_type(statement, index) {
        case KEYWARD_SQLITE_INTEGER:
            return .integer(SQLiteInt64(sqlite_nio_sqlite3_column_int64(statement, index)))
        case KEYWARD_SQLITE_FLOAT:
            return .float(sqlite_nio_sqlite3_column_double(statement, index))
        case KEYWARD_SQLITE_TEXT:
            let text = sqlite_nio_sqlite3_column_text(statement, index)  // before column_bytes, as SQLite advises
            let bytes = Int(sqlite_nio_sqlite3_column_bytes(statement, index))
            guard let text else {
                if bytes == 0 { return .text("") }
                throw lastError(sqlite_nio_sqlite3_extended_errcode(handle))
            }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: bytes), as: UTF8.self))
        case KEYWARD_SQLITE_BLOB:
            let blob = sqlite_nio_sqlite3_column_blob(statement, index)
            let bytes = Int(sqlite_nio_sqlite3_column_bytes(statement, index))
            guard let blob else {
                if bytes == 0 { return .blob(ByteBuffer()) }
                throw lastError(sqlite_nio_sqlite3_extended_errcode(handle))
            }
            return .blob(ByteBuffer(bytes: UnsafeRawBufferPointer(start: blob, count: bytes)))
        default:
            return .null
        }
    }

    private func lastError(_ code: Int32) -> SQLiteStatementError {
        let extended = sqlite_nio_sqlite3_extended_errcode(handle)
        let message = sqlite_nio_sqlite3_errmsg(handle).map { String(cString: $0) } ?? "SQLite error \(code)"
        return SQLiteStatementError(code: extended != 0 ? extended : code, message: message)
    }
}

/// Compiled statements by their SQL, the least recently used finalized first once `capacity` are kept.
struct StatementCache {
    final class Prepared {
        let handle: OpaquePointer
        private var columns: SQLiteStatementRow.Columns?

        init(handle: OpaquePointer) {
            self.handle = handle
        }

        /// The result's column names, read again when they differ from the last run's: SQLite compiles a kept
        /// statement anew after a schema change (a migration by another process), and `SELECT *` may then have
        /// other columns. Comparing the names costs no allocation.
        func currentColumns() -> SQLiteStatementRow.Columns {
            let count = Int(sqlite_nio_sqlite3_column_count(handle))
            if let columns, columns.matches(handle, count: count) { return columns }
            let names = (0..<count).map { sqlite_nio_sqlite3_column_name(handle, Int32($0)).map { String(cString: $0) } ?? "" }
            let fresh = SQLiteStatementRow.Columns(names: names)
            columns = fresh
            return fresh
        }
    }

    private let capacity: Int
    private var kept: [String: (prepared: Prepared, lastUse: UInt64)] = [:]
    private var uses: UInt64 = 0

    init(capacity: Int) {
        precondition(capacity > 0, "a statement cache keeps at least one statement")
        self.capacity = capacity
    }

    /// The kept statement for `sql`, else a new one from `compile`, kept when `keep`.
    mutating func statement(for sql: String, keep: Bool, compile: () throws -> Prepared) throws -> Prepared {
        uses += 1
        if keep, let entry = kept[sql] {
            kept[sql]?.lastUse = uses
            return entry.prepared
        }
        let prepared = try compile()
        guard keep else { return prepared }
        if kept.count >= capacity, let oldest = kept.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            sqlite_nio_sqlite3_finalize(oldest.value.prepared.handle)
            kept.removeValue(forKey: oldest.key)
        }
        kept[sql] = (prepared, uses)
        return prepared
    }

    mutating func removeAll() {
        for entry in kept.values { sqlite_nio_sqlite3_finalize(entry.prepared.handle) }
        kept.removeAll()
    }

    var count: Int { kept.count }
}

/// An error SQLite reported, with its extended result code (sqlite.org/rescode.html).
struct SQLiteStatementError: Error, CustomStringConvertible {
    let code: Int32
    let message: String

    var description: String { "\(message) (SQLite code \(code))" }

    /// SQLITE_BUSY, _SNAPSHOT or _RECOVERY; not _TIMEOUT, after which the busy handler has waited its 5 s already.
    var isBusy: Bool { [5, 517, 261].contains(code) }
    var isUniqueViolation: Bool { code == 2067 || code == 1555 }  // SQLITE_CONSTRAINT_UNIQUE, _PRIMARYKEY
    var isForeignKeyViolation: Bool { code == 787 }  // SQLITE_CONSTRAINT_FOREIGNKEY
}
