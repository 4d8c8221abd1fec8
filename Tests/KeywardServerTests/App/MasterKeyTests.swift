// Tests: the master key seals secrets to a context, its embedded key file is private, and PostgreSQL requires one.
import Foundation
@testable import KeywardServer
import XCTest

final class MasterKeyTests: XCTestCase {
    func testSealedSecretsOpenOnlyWithTheSameKeyAndContext() throws {
        let key = MasterKey.generate()
        let sealed = try key.seal(Array("private key bytes".utf8), context: "realm-a/kid-1")
        XCTAssertEqual(try key.open(sealed, context: "realm-a/kid-1"), Array("private key bytes".utf8))
        XCTAssertThrowsError(try key.open(sealed, context: "realm-b/kid-1"))
        XCTAssertThrowsError(try MasterKey.generate().open(sealed, context: "realm-a/kid-1"))
        var flipped = sealed
        flipped[flipped.count - 1] ^= 1
        XCTAssertThrowsError(try key.open(flipped, context: "realm-a/kid-1"))
        XCTAssertThrowsError(try key.open([1, 2, 3], context: "realm-a/kid-1"))
    }

    func testEmbeddedKeyFileIsCreatedPrivateAndReused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-mk-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = KeywardConfiguration()
        configuration.dataDirectory = directory
        let database = DatabaseConfiguration.sqlite(path: directory + "/keyward.db")
        let first = try MasterKey.resolve(configuration: configuration, database: database)
        let mode = try FileManager.default.attributesOfItem(atPath: directory + "/master.key")[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        let sealed = try first.seal([42], context: "c")
        XCTAssertEqual(try MasterKey.resolve(configuration: configuration, database: database).open(sealed, context: "c"), [42])

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: directory + "/master.key")
        XCTAssertThrowsError(try MasterKey.resolve(configuration: configuration, database: database))
    }

    /// A database whose key file is gone must not get a new key: its sealed realm keys would never open again, and the
    /// first token would fail long after start-up said all was well.
    func testAnEmbeddedDatabaseWithoutItsKeyFileIsRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-mk-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var configuration = KeywardConfiguration()
        configuration.dataDirectory = directory
        let database = DatabaseConfiguration.sqlite(path: directory + "/keyward.db")
        XCTAssertTrue(FileManager.default.createFile(atPath: directory + "/keyward.db", contents: Data("SQLite format 3\0".utf8)))
        XCTAssertThrowsError(try MasterKey.resolve(configuration: configuration, database: database)) { error in
            XCTAssertEqual((error as? ConfigurationError)?.setting, "masterKey")
            XCTAssertTrue("\(error)".contains("exists but its key file"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory + "/master.key"), "a new key was written")
        // An empty file (made by a failed first start) is no database yet.
        XCTAssertTrue(FileManager.default.createFile(atPath: directory + "/keyward.db", contents: Data()))
        XCTAssertNoThrow(try MasterKey.resolve(configuration: configuration, database: database))
    }

    func testPostgresRequiresAnExplicitMasterKey() {
        XCTAssertThrowsError(try MasterKey.resolve(configuration: KeywardConfiguration(), database: .postgres(url: "postgres://keyward@127.0.0.1/k"))) { error in
            XCTAssertEqual((error as? ConfigurationError)?.setting, "masterKey")
        }
    }
}
