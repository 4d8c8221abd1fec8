// The open database for either engine: statements, transactions, LISTEN, deadlines and closing.
import Logging
import SQLKit
import Synchronization

/// The open database, for either engine. Stores and the migrator reach SQL only through it.
public final class KeywardDatabase: Sendable {
    public let engine: DatabaseEngine
    /// For single statements. For several statements that must see one connection, use `transaction`.
    public let sql: any SQLDatabase
    /// Where `GroupCommit` writers run: on SQLite, the statement connection's own thread, so a group's statement
    /// runs without a hop; nil on PostgreSQL, whose statements travel to the server anyway.
    let writerExecutor: (any TaskExecutor)?
    private let backendClose: @Sendable () async throws -> Void
    private let backendListen: (@Sendable (String, @escaping @Sendable (String) -> Void) async throws -> Void)?
    private let closed = Mutex(false)

    private init(engine: DatabaseEngine, backend: OpenedDatabaseBackend) {
        self.engine = engine
        self.sql = backend.sql
        self.writerExecutor = backend.writerExecutor
        self.backendClose = backend.close
        self.backendListen = backend.listen
    }

    /// Opens the database and checks it answers (within `timeout`), so a wrong URL fails at startup. `synchronous`
    /// applies to the embedded database only.
    public static func open(
        _ configuration: DatabaseConfiguration, synchronous: SQLiteSynchronous = .full, logger: Logger, timeout: Duration = .seconds(15)
    ) async throws -> KeywardDatabase {
        let backend: OpenedDatabaseBackend
        switch configuration {
        case .sqlite(let path):
            backend = try await SQLiteBackend.open(path: path, synchronous: synchronous, logger: logger)
        case .postgres(let url):
            backend = try await PostgresBackend.open(url: url, logger: logger)
        }
        let database = KeywardDatabase(engine: configuration.engine, backend: backend)
        do {
            try await database.ping(timeout: timeout)
        } catch StoreError.unavailable(let reason) {
            try? await database.close()
            throw StoreError.unavailable(configuration.unreachableAtStartup(reason))
        } catch {
            try? await database.close()
            throw error
        }
        return database
    }

    /// Runs `SELECT 1`. Fails with `.unavailable` if the database does not answer within `timeout`
    /// (the PostgreSQL pool would otherwise wait for a connection indefinitely while the server is down).
    public func ping(timeout: Duration = .seconds(5)) async throws {
        try await StoreErrorMapping.mapping("ping") {
            try await StorageDeadline.run(timeout, operation: "ping") { [sql] in
                try await sql.raw("SELECT 1 AS one").run()
            }
        }
    }

    /// Runs `body` in one transaction on one connection: committed when it returns, rolled back when it throws.
    /// Inside `body`, issue every statement on the database passed in, not on `sql`.
    public func transaction<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        // SQLite: take the write lock at BEGIN, so the transaction never fails half-way on a lock upgrade.
        let begin: SQLQueryString = engine == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN"
        return try await sql.withSession { session in
            try await session.raw(begin).run()
            do {
                let result = try await body(session)
                try await session.raw("COMMIT").run()
                return result
            } catch {
                // The connection must not go back to the pool (or stay, on SQLite) inside a transaction.
                try? await session.raw("ROLLBACK").run()
                throw error
            }
        }
    }

    /// Whether other processes can share this database (and so need `listen` for change signals).
    public var isShared: Bool { backendListen != nil }

    /// PostgreSQL `LISTEN channel` until cancelled or the connection fails (returns at once on SQLite).
    public func listen(channel: String, onNotification: @escaping @Sendable (String) -> Void) async throws {
        guard let backendListen else { return }
        try await backendListen(channel, onNotification)
    }

    /// Closes the connection or pool. Safe to call more than once.
    public func close() async throws {
        let alreadyClosed = closed.withLock { closed in
            defer { closed = true }
            return closed
        }
        guard !alreadyClosed else { return }
        try await backendClose()
    }
}

/// Bounds how long a database call may take.
enum StorageDeadline {
    /// Runs `body`, failing with `.unavailable` if it has not finished after `limit` (and cancelling it).
    static func run<R: Sendable>(
        _ limit: Duration, operation: String, _ body: @escaping @Sendable () async throws -> R
    ) async throws -> R {
        try await withThrowingTaskGroup(of: R?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let result = first else {
                throw StoreError.unavailable("\(operation): the database did not answer within \(limit)")
            }
            return result
        }
    }
}
