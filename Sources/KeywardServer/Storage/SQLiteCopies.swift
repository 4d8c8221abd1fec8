// Copies of the embedded database: taken online while it serves, and checked before one replaces it.
import Foundation
import KeywardWire
import Logging
import NIOPosix
import SQLiteNIO

/// Online copies of the embedded database file, and the checks a copy passes before a restore trusts it.
enum SQLiteCopies {
    /// What a copy holds, as far as a restore cares.
    struct Inspection: Sendable, Equatable {
        /// The newest schema migration applied in the copy.
        let schemaVersion: Int
        let bytes: Int64
    }

    /// Writes a consistent copy of the database at `databasePath` to `destination`, which must not exist, while other
    /// connections (a serving `keyward serve`) go on reading and writing: `VACUUM INTO` reads one snapshot, in WAL
    /// mode without holding up writers. The copy is written under a temporary name, checked, flushed and then renamed,
    /// so `destination` exists only once it is whole.
    static func backUp(databasePath: String, to destination: URL, logger: Logger) async throws -> Inspection {
        guard FileManager.default.fileExists(atPath: databasePath) else {
            throw StoreError.notFound("there is no database at \(databasePath) to back up")
        }
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw StoreError.conflict("\(destination.path) exists already; name a new file")
        }
        // Shared: a restore must not swap the file out from under the copy.
        let lock = try SQLiteFileLock.acquire(databasePath: databasePath, mode: .shared)
        defer { lock.release() }
        let partial = URL(fileURLWithPath: destination.path + ".partial-" + UUID().uuidString)
        do {
            try PrivateFile.createEmpty(partial)  // VACUUM INTO keeps the mode of an empty file it is given: 0600
            try await withConnection(databasePath, logger: logger) { connection in
                _ = try await connection.query("PRAGMA busy_timeout = 5000", [])
                _ = try await connection.query("VACUUM INTO ?", [.text(partial.path)])
            }
            let inspection = try await inspect(partial.path, logger: logger)
            try PrivateFile.settle(partial, as: destination)
            return inspection
        } catch {
            try? FileManager.default.removeItem(at: partial)
            throw error
        }
    }

    /// Checks that `path` is a whole Keyward database this build can open: SQLite's `integrity_check` finds nothing,
    /// it has a schema history, and no migration in it is newer than this build knows (`newestKnown`).
    /// `name`: what the messages call the file (the backup a staged copy was made from).
    static func inspect(_ path: String, describedAs name: String? = nil, newestKnown: Int? = nil, logger: Logger) async throws -> Inspection {
        let name = name ?? path
        let versions: [Int]
        do {
            versions = try await withConnection(path, logger: logger) { connection in
                let problems = try await connection.query("PRAGMA integrity_check", []).compactMap { $0.columns.first?.data.string }
                guard problems == ["ok"] else {
                    throw StoreError.unavailable("\(name) is damaged (integrity_check: \(problems.prefix(3).joined(separator: "; ")))")
                }
                let history = try await connection.query(
                    "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'keyward_schema_migrations'", []
                )
                guard history.first?.column("n")?.integer == 1 else {
                    throw StoreError.unavailable("\(name) is an SQLite database but not Keyward's (it has no keyward_schema_migrations)")
                }
                return try await connection.query("SELECT version FROM keyward_schema_migrations", []).compactMap { $0.column("version")?.integer }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.unavailable("\(name) is not a readable SQLite database (\(error))")
        }
        guard let newest = versions.max() else {
            throw StoreError.unavailable("\(name) has no schema migrations applied: it is an empty Keyward database")
        }
        if let newestKnown, newest > newestKnown {
            throw StoreError.unavailable(
                "\(name) was written by a newer Keyward (schema version \(newest); this build knows up to \(newestKnown)): restore it with that release"
            )
        }
        let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        return Inspection(schemaVersion: newest, bytes: bytes)
    }

    /// Folds a copy's write-ahead log back into its main file and leaves it in rollback-journal mode, so the one
    /// file is the whole database and can be moved on its own.
    static func makeSelfContained(_ path: String, logger: Logger) async throws {
        try await withConnection(path, logger: logger) { connection in
            _ = try await connection.query("PRAGMA journal_mode = DELETE", [])
        }
    }

    private static func withConnection<R: Sendable>(
        _ path: String, logger: Logger, _ body: (SQLiteConnection) async throws -> R
    ) async throws -> R {
        let connection = try await SQLiteConnection.open(
            storage: .file(path: path), threadPool: .singleton, logger: logger, on: MultiThreadedEventLoopGroup.singleton.any()
        )
        do {
            let result = try await body(connection)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }
}
