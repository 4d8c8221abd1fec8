// Opening the embedded SQLite database in WAL mode with its statement, session and checkpoint connections.
import Foundation
import Logging
import SQLKit
import NIOCore
import NIOPosix
import SQLiteKit

/// Opens the embedded database in WAL mode: a connection for statements, one for transactions behind a gate, and
/// one that checkpoints the log (`SQLiteCheckpointer`).
///
/// One statement connection rather than a pool: SQLite serialises writers anyway, and a pool of writers would
/// spend its time in the busy handler's sleeps. `synchronous` is the `sqlite.synchronous` setting: `full` (the
/// default) syncs the log at each commit, which grouped writes share; `normal` trades the last commits before a
/// power loss for throughput.
enum SQLiteBackend {
    static func open(path: String, synchronous: SQLiteSynchronous, logger: Logger) async throws -> OpenedDatabaseBackend {
        let pragmas = pragmas(synchronous: synchronous)
        let absolutePath = try prepareFile(at: path)
        let lock = try SQLiteFileLock.acquire(databasePath: absolutePath, mode: .shared)
        // Two connections to the same file, each with a thread of its own. Single statements go to the first, which
        // keeps its compiled statements (`SQLiteStatementConnection`): one thread that stays busy serves them
        // with the fewest wake-ups; on the shared two-thread pool the threads took turns on the connection's mutex
        // and a push login cost a quarter more CPU. Transactions take the second behind a gate, so their
        // statements are never interleaved with anyone else's; it has its own thread because a single statement
        // waiting for the write lock blocks its thread in SQLite's busy handler, and a transaction sharing that
        // thread could not finish: both would wait out busy_timeout.
        // A third connection, with its thread, copies the log back (`SQLiteCheckpointer`).
        let threads = (0..<2).map { _ in NIOThreadPool(numberOfThreads: 1) }
        for thread in threads { thread.start() }
        var opened: [SQLiteConnection] = []
        let statements: SQLiteStatementConnection
        do {
            // The session connection first: it switches the file to WAL, which then holds for every connection.
            for thread in threads {
                opened.append(try await openConfigured(absolutePath, pragmas: pragmas, threadPool: thread, logger: logger))
            }
            statements = try await SQLiteStatementConnection.open(path: absolutePath, setup: pragmas)
        } catch {
            for connection in opened { try? await connection.close() }
            for thread in threads { try? await thread.shutdownGracefully() }
            lock.release()
            throw error
        }
        let sessions = opened[0]
        let sessionThread = threads[0]
        let checkpointer = SQLiteCheckpointer(connection: opened[1], thread: threads[1], logger: logger)
        let gate = SQLiteStatementGate()
        let closed = AtomicFlag()
        let sql = SerializedSQLiteDatabase(
            statements: SQLiteStatementDatabase(
                connection: statements, logger: logger, eventLoop: MultiThreadedEventLoopGroup.singleton.any(), queryLogLevel: .trace
            ),
            sessions: sessions.sql(queryLogLevel: .trace), gate: gate, closed: closed
        )
        return OpenedDatabaseBackend(sql: sql, writerExecutor: statements.executor) {
            // Refuse new statements, stop checkpointing, wait for the transaction in flight, then close both and stop
            // their threads; the file is free for a restore once they are closed.
            defer { lock.release() }
            closed.set()
            try await checkpointer.stop()
            try await gate.withGate { try await sessions.close() }
            try await statements.close()
            try await sessionThread.shutdownGracefully()
        }
    }

    private static func openConfigured(
        _ path: String, pragmas: [String], threadPool: NIOThreadPool, logger: Logger
    ) async throws -> SQLiteConnection {
        let connection = try await SQLiteConnection.open(
            storage: .file(path: path), threadPool: threadPool, logger: logger, on: MultiThreadedEventLoopGroup.singleton.any()
        )
        do {
            try await configure(connection, pragmas: pragmas, logger: logger, path: path)
        } catch {
            try? await connection.close()
            throw error
        }
        return connection
    }

    /// `path` made absolute against the working directory, the way the database file is opened.
    static func absolutePath(_ path: String) -> String {
        let url = path.hasPrefix("/")
            ? URL(fileURLWithPath: path)
            : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(path)
        return url.standardizedFileURL.path
    }

    private static func prepareFile(at path: String) throws -> String {
        let fileManager = FileManager.default
        let absolutePath = absolutePath(path)
        let directory = URL(fileURLWithPath: absolutePath).deletingLastPathComponent().path
        do {
            if !fileManager.fileExists(atPath: directory) {
                try fileManager.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]
                )
            }
            if !fileManager.fileExists(atPath: absolutePath) {
                guard fileManager.createFile(atPath: absolutePath, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                    throw StoreError.unavailable("cannot create the database file \(absolutePath)")
                }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.unavailable("cannot prepare the database file \(absolutePath): \(error.localizedDescription)")
        }
        return absolutePath
    }

    private static func configure(_ connection: SQLiteConnection, pragmas: [String], logger: Logger, path: String) async throws {
        // busy_timeout first: another process (e.g. `keyward migrate`) may hold the file.
        _ = try await connection.query(pragmas[0], [])
        let mode = try await connection.query("PRAGMA journal_mode = WAL", []).first?.column("journal_mode")?.string
        if mode?.lowercased() != "wal" {
            logger.warning("SQLite did not switch to WAL mode; writes will be slower", metadata: ["path": "\(path)", "mode": "\(mode ?? "?")"])
        }
        for pragma in pragmas.dropFirst() { _ = try await connection.query(pragma, []) }
    }

    /// Every connection's settings, busy_timeout first. SQLite's default page cache is 2 MB; the single-use keys
    /// (DPoP and host-token jtis) land on random pages of their index, so with a small cache most inserts first read
    /// a page back through a system call.
    static func pragmas(synchronous: SQLiteSynchronous) -> [String] {
        [
            "PRAGMA busy_timeout = 5000",
            synchronous.pragma,
            "PRAGMA wal_autocheckpoint = \(SQLiteCheckpointer.fallbackPages)",
            "PRAGMA foreign_keys = ON",
            "PRAGMA cache_size = -\(cacheKibibytes)",
        ]
    }

    /// Page cache per connection, in KiB.
    static let cacheKibibytes = 65_536
}

/// What each engine's opener hands to `KeywardDatabase`.
struct OpenedDatabaseBackend: Sendable {
    let sql: any SQLDatabase
    /// Where grouped writes run their statements without a hop (SQLite: the statement connection's thread).
    var writerExecutor: (any TaskExecutor)? = nil
    let close: @Sendable () async throws -> Void
    /// PostgreSQL `LISTEN`: runs until cancelled, calling back with each notification payload. nil for SQLite,
    /// whose single process needs no cross-node signals.
    var listen: (@Sendable (String, @escaping @Sendable (String) -> Void) async throws -> Void)? = nil
}
