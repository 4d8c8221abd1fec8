// `keyward backup` and `keyward restore` for the embedded database: an online copy out, a checked copy in.
import Foundation
import KeywardWire
import Logging

/// Backing up and restoring the embedded (SQLite) database. PostgreSQL has its own tools (`pg_dump`, `pg_restore`;
/// docs/DEPLOYMENT.md). The master key is never in a backup: whoever holds the backup file alone must not be able to
/// open the realm keys sealed in it, so the key is kept apart and handed back at restore.
public enum EmbeddedBackup {
    public struct Report: Sendable, Equatable {
        public let databasePath: String
        public let schemaVersion: Int
        public let bytes: Int64
    }

    public struct RestoreReport: Sendable, Equatable {
        public let databasePath: String
        /// The schema version the copy had; the restored database has every migration of this build applied.
        public let schemaVersion: Int
        public let realms: Int
        /// Where the database that was replaced now is (nil when there was none).
        public let previousDatabase: String?
        /// Where the master key was taken from.
        public let masterKeySource: String
    }

    /// Takes an online copy of the embedded database into `destination` (a new file, mode 0600).
    public static func backUp(configuration: KeywardConfiguration, to destination: String, logger: Logger) async throws -> Report {
        let databasePath = try embeddedPath(configuration, command: "backup")
        let inspection = try await plainly {
            try await SQLiteCopies.backUp(databasePath: databasePath, to: URL(fileURLWithPath: destination).standardizedFileURL, logger: logger)
        }
        return Report(databasePath: databasePath, schemaVersion: inspection.schemaVersion, bytes: inspection.bytes)
    }

    /// Replaces the embedded database with the copy at `source`, after checking it: nothing may have the database open,
    /// the copy must pass `integrity_check` and be no newer than this build, and its realm keys must open with the master
    /// key the restored server will use (`masterKeyFile`, else `masterKey` / KEYWARD_MASTER_KEY, else the data
    /// directory's `master.key`). The database it replaces is kept beside it, renamed.
    public static func restore(
        configuration: KeywardConfiguration, from source: String, masterKeyFile: String?, logger: Logger, now: Date = Date()
    ) async throws -> RestoreReport {
        let databasePath = try embeddedPath(configuration, command: "restore")
        let sourceURL = URL(fileURLWithPath: source).standardizedFileURL
        guard FileManager.default.fileExists(atPath: sourceURL.path) else { throw BackupError("no backup at \(sourceURL.path)") }
        let databaseURL = URL(fileURLWithPath: databasePath)
        try PrivateFile.createDirectory(databaseURL.deletingLastPathComponent())
        let lock = try await plainly { try SQLiteFileLock.acquire(databasePath: databasePath, mode: .exclusive) }
        defer { lock.release() }

        let staging = URL(fileURLWithPath: databasePath + ".restoring-" + UUID().uuidString)
        defer { removeDatabaseFiles(staging.path) }
        do {
            try PrivateFile.copy(sourceURL, to: staging)
        } catch {
            throw BackupError("cannot copy \(sourceURL.path) to \(staging.path): \(error)")
        }
        let inspection = try await plainly {
            try await SQLiteCopies.inspect(
                staging.path, describedAs: sourceURL.path, newestKnown: SchemaMigration.all.map(\.version).max(), logger: logger
            )
        }
        let key = try masterKey(configuration: configuration, masterKeyFile: masterKeyFile)
        let realms = try await checkKeysOpen(configuration: configuration, staging: staging.path, key: key, logger: logger)
        try await SQLiteCopies.makeSelfContained(staging.path, logger: logger)

        if let file = key.fileToWrite {
            do {
                try PrivateFile.write(Data((key.base64 + "\n").utf8), to: URL(fileURLWithPath: file))
            } catch {
                throw BackupError("cannot write the master key file \(file): \(error)")
            }
        }
        let previous = try moveAside(databasePath, now: now)
        do {
            try PrivateFile.settle(staging, as: databaseURL)
        } catch {
            throw BackupError("cannot move the restored copy into place at \(databasePath): \(error); the previous database is at \(previous ?? "-")")
        }
        return RestoreReport(
            databasePath: databasePath, schemaVersion: inspection.schemaVersion, realms: realms, previousDatabase: previous,
            masterKeySource: key.source
        )
    }

    /// The store's errors as one sentence each, without the "database unavailable" a server would log.
    private static func plainly<R>(_ body: () async throws -> R) async throws -> R {
        do {
            return try await body()
        } catch let error as StoreError {
            switch error {
            case .conflict(let message), .notFound(let message), .unavailable(let message): throw BackupError(message)
            }
        }
    }

    private static func embeddedPath(_ configuration: KeywardConfiguration, command: String) throws -> String {
        let database: DatabaseConfiguration
        do {
            database = try DatabaseConfiguration(url: configuration.resolvedDatabaseURL)
        } catch let error as DatabaseConfigurationError {
            throw ConfigurationError(setting: "databaseURL", problem: error.description)
        }
        guard case .sqlite(let path) = database else {
            throw BackupError(
                "`keyward \(command)` is for the embedded database; with PostgreSQL use pg_dump and pg_restore "
                    + "(docs/DEPLOYMENT.md, \"Backups\") and keep KEYWARD_MASTER_KEY with them"
            )
        }
        return SQLiteBackend.absolutePath(path)
    }

    private struct ChosenKey {
        let base64: String
        let source: String
        /// The data directory's `master.key`, when the key came from --master-key-file and the directory has none yet.
        let fileToWrite: String?
    }

    private static func masterKey(configuration: KeywardConfiguration, masterKeyFile: String?) throws -> ChosenKey {
        let dataDirectoryKey = configuration.dataDirectory + "/master.key"
        let existing = FileManager.default.fileExists(atPath: dataDirectoryKey) ? try readKey(dataDirectoryKey) : nil
        guard let masterKeyFile else {
            if let configured = configuration.masterKey {
                return ChosenKey(base64: configured, source: "masterKey (KEYWARD_MASTER_KEY)", fileToWrite: nil)
            }
            if let existing { return ChosenKey(base64: existing, source: dataDirectoryKey, fileToWrite: nil) }
            throw BackupError(
                "no master key for the restored database: pass --master-key-file with the master.key kept with the backup "
                    + "(or set KEYWARD_MASTER_KEY)"
            )
        }
        guard configuration.masterKey == nil else {
            throw BackupError("--master-key-file and masterKey (KEYWARD_MASTER_KEY) are both given: name the key once")
        }
        let given = try readKey(masterKeyFile)
        if let existing, existing != given {
            throw BackupError(
                "\(dataDirectoryKey) holds a different master key than \(masterKeyFile); move it away first if the backup's key is the one to keep"
            )
        }
        return ChosenKey(base64: given, source: masterKeyFile, fileToWrite: existing == nil ? dataDirectoryKey : nil)
    }

    private static func readKey(_ path: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw BackupError("cannot read the master key file \(path)") }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Data(base64Encoded: trimmed), bytes.count == 32 else {
            throw BackupError("\(path) is not a master key (32 bytes, base64)")
        }
        return trimmed
    }

    /// Opens the staged copy as a server would (applying this build's migrations to it) and unseals every realm's
    /// signing key: a backup restored with the wrong key would otherwise start and fail at its first token.
    private static func checkKeysOpen(configuration: KeywardConfiguration, staging: String, key: ChosenKey, logger: Logger) async throws -> Int {
        var onCopy = configuration
        onCopy.databaseURL = "sqlite:" + staging
        onCopy.masterKey = key.base64
        let runtime = try await KeywardRuntime.start(configuration: onCopy, logger: logger)
        do {
            let realms = try await runtime.oauth.realms.listRealms()
            for realm in realms {
                do {
                    _ = try await runtime.oauth.keys.activeSigner(realm: realm.name)
                } catch let error as MasterKeyError {
                    throw BackupError(
                        "the signing key of realm '\(realm.name)' does not open with the master key from \(key.source) (\(error)): "
                            + "it is not the key the backup was made with"
                    )
                }
            }
            try await runtime.shutdown()
            return realms.count
        } catch {
            try? await runtime.shutdown()
            throw error
        }
    }

    /// Renames the database being replaced, with its write-ahead log, to `<database>.before-restore-<time>`; returns
    /// that name (nil when there was no database). Its shared-memory index is rebuilt from the log, so it is dropped.
    private static func moveAside(_ databasePath: String, now: Date) throws -> String? {
        let fileManager = FileManager.default
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let aside = databasePath + ".before-restore-" + formatter.string(from: now)
        let present = fileManager.fileExists(atPath: databasePath)
        do {
            // A log left without its database would be replayed into the restored one: it goes aside too.
            if fileManager.fileExists(atPath: databasePath + "-wal") {
                try fileManager.moveItem(atPath: databasePath + "-wal", toPath: aside + "-wal")
            }
            if present { try fileManager.moveItem(atPath: databasePath, toPath: aside) }
            for suffix in ["-shm", "-journal"] where fileManager.fileExists(atPath: databasePath + suffix) {
                try fileManager.removeItem(atPath: databasePath + suffix)
            }
        } catch {
            throw BackupError("cannot move the current database \(databasePath) aside to \(aside): \(error.localizedDescription)")
        }
        return present ? aside : nil
    }

    /// A staged copy's files: the database, its log, its index and its lock file.
    private static func removeDatabaseFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal", ".lock"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}

/// Why a backup or restore did not happen; nothing was changed.
public struct BackupError: Error, CustomStringConvertible, Equatable {
    public let description: String
    init(_ description: String) { self.description = description }
}
