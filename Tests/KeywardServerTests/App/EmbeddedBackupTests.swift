// Tests: `keyward backup` copies the embedded database while it is written, and `keyward restore` refuses every copy
// and every moment it must not take, and otherwise puts the copy back with its master key.
import Foundation
import Logging
import SQLiteNIO
import XCTest

@testable import KeywardServer

final class EmbeddedBackupTests: XCTestCase {
    private var directory: URL!

    override func setUp() {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-backup-\(UUID().uuidString)")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    private func configuration(_ name: String) -> KeywardConfiguration {
        var configuration = KeywardConfiguration()
        configuration.dataDirectory = directory.appendingPathComponent(name).path
        configuration.bcryptCost = 4
        return configuration
    }

    private var logger: Logger {
        var logger = Logger(label: "backup-test")
        logger.logLevel = .critical
        return logger
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// A source data directory with one realm and `users` users; returns its configuration.
    private func source(users: Int = 3) async throws -> KeywardConfiguration {
        let configuration = configuration("source")
        let runtime = try await KeywardRuntime.start(configuration: configuration, logger: logger)
        do {
            _ = try await runtime.oauth.realms.createRealm(name: "shop", signingAlgorithm: "ES256", accessTokenLifetime: 300)
            for index in 0..<users {
                _ = try await runtime.accounts.users.createUser(realm: "shop", username: "before-\(index)", password: "password-\(index)")
            }
            try await runtime.shutdown()
        } catch {
            try? await runtime.shutdown()
            throw error
        }
        return configuration
    }

    func testACopyTakenWhileWritesGoOnRestoresEveryWriteMadeBeforeIt() async throws {
        let sourceConfiguration = try await source()
        let serving = try await KeywardRuntime.start(configuration: sourceConfiguration, logger: logger)
        let writer = Task {
            var index = 0
            while !Task.isCancelled {
                _ = try await serving.accounts.users.createUser(realm: "shop", username: "during-\(index)", password: "password")
                index += 1
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        let backup = try await EmbeddedBackup.backUp(configuration: sourceConfiguration, to: path("copy.db"), logger: logger)
        writer.cancel()
        _ = await writer.result
        try await serving.shutdown()
        XCTAssertEqual(backup.schemaVersion, SchemaMigration.all.map(\.version).max())
        let mode = try FileManager.default.attributesOfItem(atPath: path("copy.db"))[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600, "the copy holds password hashes and sealed keys")

        let target = configuration("target")
        let report = try await EmbeddedBackup.restore(
            configuration: target, from: path("copy.db"), masterKeyFile: sourceConfiguration.dataDirectory + "/master.key", logger: logger
        )
        XCTAssertEqual(report.realms, 1)
        XCTAssertNil(report.previousDatabase)
        let restored = try await KeywardRuntime.start(configuration: target, logger: logger)
        let users = try await restored.accounts.users.listUsers(realm: "shop").map(\.username)
        let signer = try await restored.oauth.keys.activeSigner(realm: "shop")
        try await restored.shutdown()
        XCTAssertTrue(Set(users).isSuperset(of: ["before-0", "before-1", "before-2"]), "\(users)")
        XCTAssertFalse(signer.kid.isEmpty)
        let keyFile = try String(contentsOfFile: target.dataDirectory + "/master.key", encoding: .utf8)
        XCTAssertEqual(keyFile, try String(contentsOfFile: sourceConfiguration.dataDirectory + "/master.key", encoding: .utf8))
    }

    func testRestoreRefusesWhileTheDatabaseIsOpenAndAServerCannotOpenItDuringARestore() async throws {
        let sourceConfiguration = try await source(users: 0)
        _ = try await EmbeddedBackup.backUp(configuration: sourceConfiguration, to: path("copy.db"), logger: logger)
        let serving = try await KeywardRuntime.start(configuration: sourceConfiguration, logger: logger)
        do {
            _ = try await EmbeddedBackup.restore(configuration: sourceConfiguration, from: path("copy.db"), masterKeyFile: nil, logger: logger)
            XCTFail("restored under a live server")
        } catch let error as BackupError {
            XCTAssertTrue(error.description.contains("is in use"), error.description)
        }
        try await serving.shutdown()

        let databasePath = sourceConfiguration.dataDirectory + "/keyward.db"
        let restoring = try SQLiteFileLock.acquire(databasePath: databasePath, mode: .exclusive)
        do {
            let runtime = try await KeywardRuntime.start(configuration: sourceConfiguration, logger: logger)
            try await runtime.shutdown()
            XCTFail("a server opened the database while a restore held it")
        } catch let error as StoreError {
            XCTAssertTrue("\(error)".contains("`keyward restore` is replacing"), "\(error)")
        }
        restoring.release()

        // Stopped: the restore goes through and keeps the database it replaced.
        let report = try await EmbeddedBackup.restore(configuration: sourceConfiguration, from: path("copy.db"), masterKeyFile: nil, logger: logger)
        let previous = try XCTUnwrap(report.previousDatabase)
        XCTAssertTrue(previous.hasPrefix(databasePath + ".before-restore-"), previous)
        XCTAssertTrue(FileManager.default.fileExists(atPath: previous))
        XCTAssertEqual(report.masterKeySource, sourceConfiguration.dataDirectory + "/master.key")
    }

    func testRestoreRefusesCopiesItCannotTrustAndChangesNothing() async throws {
        let sourceConfiguration = try await source(users: 1)
        _ = try await EmbeddedBackup.backUp(configuration: sourceConfiguration, to: path("copy.db"), logger: logger)
        let sourceKey = sourceConfiguration.dataDirectory + "/master.key"
        let copy = try Data(contentsOf: URL(fileURLWithPath: path("copy.db")))

        try copy.prefix(copy.count / 2).write(to: URL(fileURLWithPath: path("truncated.db")))
        try Data("not a database at all".utf8).write(to: URL(fileURLWithPath: path("text.db")))
        try copy.write(to: URL(fileURLWithPath: path("newer.db")))
        try await Self.sql(path("newer.db"), "INSERT INTO keyward_schema_migrations (version, name, applied_at) VALUES (9999, 'future', 0)")
        try copy.write(to: URL(fileURLWithPath: path("other.db")))
        try await Self.sql(path("other.db"), "DROP TABLE keyward_schema_migrations")
        try Data(Self.randomKey().utf8).write(to: URL(fileURLWithPath: path("wrong.key")))

        let cases: [(String, String?, String)] = [
            ("missing.db", sourceKey, "no backup at"),
            ("truncated.db", sourceKey, "truncated.db is"),
            ("text.db", sourceKey, "is not a readable SQLite database"),
            ("newer.db", sourceKey, "was written by a newer Keyward (schema version 9999"),
            ("other.db", sourceKey, "not Keyward's"),
            ("copy.db", path("wrong.key"), "does not open with the master key"),
            ("copy.db", nil, "no master key for the restored database"),
            ("copy.db", path("text.db"), "is not a master key"),
        ]
        let target = configuration("target")
        for (file, key, expected) in cases {
            do {
                _ = try await EmbeddedBackup.restore(configuration: target, from: path(file), masterKeyFile: key, logger: logger)
                XCTFail("\(file) with key \(key ?? "-") was restored")
            } catch let error as BackupError {
                XCTAssertTrue(error.description.contains(expected), "\(file): \(error.description)")
            }
            let left = (try? FileManager.default.contentsOfDirectory(atPath: target.dataDirectory)) ?? []
            XCTAssertEqual(left.filter { $0 != "keyward.db.lock" }, [], "\(file) left \(left) behind")
        }
    }

    func testBackupRefusesToWriteOverAFileAndPostgresIsSentToItsOwnTools() async throws {
        let sourceConfiguration = try await source(users: 0)
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: path("taken.db")))
        do {
            _ = try await EmbeddedBackup.backUp(configuration: sourceConfiguration, to: path("taken.db"), logger: logger)
            XCTFail("wrote over an existing file")
        } catch let error as BackupError {
            XCTAssertTrue(error.description.contains("exists already"), error.description)
        }
        XCTAssertEqual(try String(contentsOfFile: path("taken.db"), encoding: .utf8), "keep me")

        var postgres = configuration("pg")
        postgres.databaseURL = "postgres://keyward@127.0.0.1:1/keyward"
        do {
            _ = try await EmbeddedBackup.backUp(configuration: postgres, to: path("pg.db"), logger: logger)
            XCTFail("backed up PostgreSQL as a file")
        } catch let error as BackupError {
            XCTAssertTrue(error.description.contains("pg_dump"), error.description)
        }
        do {
            _ = try await EmbeddedBackup.backUp(configuration: configuration("empty"), to: path("nothing.db"), logger: logger)
            XCTFail("backed up a database that does not exist")
        } catch let error as BackupError {
            XCTAssertTrue(error.description.contains("there is no database at"), error.description)
        }
    }

    private static func randomKey() -> String {
        Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    }

    private static func sql(_ path: String, _ statement: String) async throws {
        let connection = try await SQLiteConnection.open(storage: .file(path: path))
        _ = try await connection.query(statement, [])
        try await connection.close()
    }
}
