// Tests: the SQLite connection's kept compiled statements: exact values, reuse, LRU, errors, schema changes.
import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLKit
import XCTest

@testable import KeywardServer

/// The statement connection keeps compiled statements: values come back as they went in (text to its length, past a
/// NUL, where SQLiteNIO stops at the NUL), a kept
/// statement runs again with new values and after an error, the least recently used is dropped at capacity, and
/// SQLite's errors keep their meaning for the stores.
final class SQLiteStatementConnectionTests: XCTestCase {
    private func withConnection(capacity: Int = 256, _ body: (SQLiteStatementConnection, any SQLDatabase) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-statements-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let connection = try await SQLiteStatementConnection.open(
            path: directory.appendingPathComponent("test.db").path, cacheCapacity: capacity,
            setup: SQLiteBackend.pragmas(synchronous: .full) + ["PRAGMA journal_mode = WAL"]
        )
        let database = SQLiteStatementDatabase(
            connection: connection, logger: StorageTestHarness.logger, eventLoop: MultiThreadedEventLoopGroup.singleton.any(), queryLogLevel: nil
        )
        do {
            try await body(connection, database)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    func testValuesComeBackAsTheyWentIn() async throws {
        try await withConnection { _, sql in
            try await sql.raw("CREATE TABLE sample (i BIGINT, f REAL, t TEXT, b BLOB, n TEXT, flag BOOLEAN)").run()
            let blob: [UInt8] = [0, 1, 2, 0xFF, 0]
            try await sql.raw("""
                INSERT INTO sample (i, f, t, b, n, flag)
                VALUES (\(bind: Int64.min), \(bind: 2.5), \(bind: "żółw\u{0}🐢"), \(bind: Data(blob)), \(bind: String?.none), \(bind: true))
                """).run()
            try await sql.raw("INSERT INTO sample (i, f, t, b, n, flag) VALUES (\(bind: 0), \(bind: 0.0), \(bind: ""), \(bind: Data()), NULL, \(bind: false))").run()
            let rows = try await sql.raw("SELECT i, f, t, b, n, flag FROM sample ORDER BY i").all()
            XCTAssertEqual(rows.count, 2)
            XCTAssertEqual(try rows[0].decode(column: "i", as: Int64.self), Int64.min)
            XCTAssertEqual(try rows[0].decode(column: "f", as: Double.self), 2.5)
            XCTAssertEqual(try rows[0].decode(column: "t", as: String.self), "żółw\u{0}🐢", "text with a NUL in it is read to its length")
            XCTAssertEqual(try rows[0].decode(column: "b", as: Data.self), Data(blob))
            XCTAssertTrue(try rows[0].decodeNil(column: "n"))
            XCTAssertEqual(try rows[0].decode(column: "n", as: String?.self), nil)
            XCTAssertEqual(try rows[0].decode(column: "flag", as: Bool.self), true)
            XCTAssertEqual(try rows[1].decode(column: "t", as: String.self), "")
            XCTAssertEqual(try rows[1].decode(column: "b", as: Data.self), Data())
            XCTAssertEqual(try rows[1].decode(column: "flag", as: Bool.self), false)
            XCTAssertEqual(rows[0].allColumns, ["i", "f", "t", "b", "n", "flag"])
            XCTAssertFalse(rows[0].contains(column: "missing"))
            XCTAssertTrue(try rows[0].decodeNil(column: "missing"))
            XCTAssertThrowsError(try rows[0].decode(column: "missing", as: String.self))
        }
    }

    func testAKeptStatementRunsAgainWithNewValuesAndAfterAnError() async throws {
        try await withConnection { connection, sql in
            try await sql.raw("CREATE TABLE names (name TEXT PRIMARY KEY, parent TEXT REFERENCES names (name))").run()
            let before = try await connection.keptStatements()
            for name in ["a", "b", "c"] {
                try await sql.raw("INSERT INTO names (name, parent) VALUES (\(bind: name), \(bind: String?.none))").run()
            }
            let afterInserts = try await connection.keptStatements()
            XCTAssertEqual(afterInserts, before + 1, "one compiled statement for the three inserts")

            // A refused run leaves the kept statement usable, and its error keeps its meaning for the stores.
            do {
                try await sql.raw("INSERT INTO names (name, parent) VALUES (\(bind: "a"), \(bind: String?.none))").run()
                XCTFail("a duplicate name was stored")
            } catch {
                XCTAssertEqual(StoreErrorMapping.kind(of: error), .uniqueViolation, "\(error)")
            }
            do {
                try await sql.raw("INSERT INTO names (name, parent) VALUES (\(bind: "d"), \(bind: "nobody"))").run()
                XCTFail("a row naming a missing parent was stored")
            } catch {
                XCTAssertEqual(StoreErrorMapping.kind(of: error), .foreignKeyViolation, "\(error)")
            }
            try await sql.raw("INSERT INTO names (name, parent) VALUES (\(bind: "d"), \(bind: "a"))").run()
            do {
                try await sql.raw("SELEKT nothing").run()
                XCTFail("nonsense ran")
            } catch {
                XCTAssertEqual(StoreErrorMapping.kind(of: error), .other)
                XCTAssertTrue("\(error)".contains("syntax error"), "\(error)")
            }

            let names = try await sql.raw("SELECT name, parent FROM names WHERE name >= \(bind: "b") ORDER BY name").all()
            XCTAssertEqual(try names.map { try $0.decode(column: "name", as: String.self) }, ["b", "c", "d"])
            XCTAssertEqual(try names.last?.decode(column: "parent", as: String?.self), "a")
        }
    }

    /// After `close` the handle is gone: a statement is refused with a store error, never run on freed memory.
    func testAStatementAfterCloseIsRefused() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-statements-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let connection = try await SQLiteStatementConnection.open(path: directory.appendingPathComponent("test.db").path, setup: [])
        try await connection.execute("SELECT 1", []) { _ in }
        try await connection.close()
        do {
            try await connection.execute("SELECT 1", []) { _ in }
            XCTFail("a statement ran after close")
        } catch {
            // Either the connection's refusal or the stopped thread's: never a crash.
        }
        try await connection.close()  // twice is harmless
    }

    func testTheLeastRecentlyUsedStatementGoesAtCapacity() async throws {
        try await withConnection(capacity: 2) { connection, sql in
            let one = { @Sendable (value: Int) async throws -> Int? in
                try await sql.raw("SELECT \(bind: value) + 1 AS answer").first()?.decode(column: "answer", as: Int.self)
            }
            let two = { @Sendable (value: Int) async throws -> Int? in
                try await sql.raw("SELECT \(bind: value) * 2 AS answer").first()?.decode(column: "answer", as: Int.self)
            }
            let three = { @Sendable (value: Int) async throws -> Int? in
                try await sql.raw("SELECT \(bind: value) - 3 AS answer").first()?.decode(column: "answer", as: Int.self)
            }
            var answers: [Int?] = []
            answers.append(try await one(1))
            answers.append(try await two(2))
            answers.append(try await one(10))  // `two` is now the least recently used
            answers.append(try await three(3))
            answers.append(try await two(5))  // compiled again
            XCTAssertEqual(answers, [2, 4, 11, 0, 10])
            let kept = try await connection.keptStatements()
            XCTAssertEqual(kept, 2)
        }
    }

    /// New values do not make SQLite compile a kept statement again, even where its planner looked at them (a
    /// parameter compared with a joined column, a LEFT JOIN's ON term): the statements of a provider sign-in were
    /// compiled anew on every run before the connection asked for stable plans.
    func testNewValuesDoNotRecompileAKeptStatement() async throws {
        try await withConnection { connection, sql in
            try await sql.raw("CREATE TABLE people (realm TEXT, id TEXT, email TEXT, PRIMARY KEY (realm, id))").run()
            try await sql.raw("CREATE TABLE phones (realm TEXT, owner TEXT, name TEXT)").run()
            try await sql.raw("CREATE TABLE settings (realm TEXT PRIMARY KEY, value TEXT)").run()
            for (realm, id) in [("r1", "a"), ("r2", "b"), ("r3", "c")] {
                try await sql.raw("INSERT INTO people (realm, id, email) VALUES (\(bind: realm), \(bind: id), \(bind: id + "@example.test"))").run()
                try await sql.raw("INSERT INTO phones (realm, owner, name) VALUES (\(bind: realm), \(bind: id), \(bind: "phone of " + id))").run()
            }
            let before = try await connection.recompilations()
            var found: [String] = []
            for (realm, email) in [("r1", "a@example.test"), ("r2", "b@example.test"), ("r3", "c@example.test"), ("r1", "nobody")] {
                let joined = try await sql.raw("""
                    SELECT f.name FROM people p JOIN phones f ON f.realm = p.realm AND f.owner = p.id
                    WHERE p.realm = \(bind: realm) AND p.email = \(bind: email) ORDER BY f.name LIMIT 20
                    """).all()
                found += try joined.map { try $0.decode(column: "name", as: String.self) }
                _ = try await sql.raw("""
                    SELECT s.value FROM (SELECT 1 AS anchor) AS one LEFT JOIN settings s ON s.realm = \(bind: realm)
                    """).all()
            }
            XCTAssertEqual(found, ["phone of a", "phone of b", "phone of c"])
            let after = try await connection.recompilations()
            XCTAssertEqual(after, before)
        }
    }

    /// Each engine statement the stores run goes through the kept statements; a schema change on another connection
    /// (a migration by `keyward migrate`) makes SQLite compile a kept statement again, not fail it.
    func testAKeptStatementOutlivesASchemaChange() async throws {
        try await withConnection { connection, sql in
            try await sql.raw("CREATE TABLE evolving (a TEXT)").run()
            try await sql.raw("INSERT INTO evolving (a) VALUES (\(bind: "x"))").run()
            let read = { @Sendable () async throws -> [String] in
                try await sql.raw("SELECT * FROM evolving").all().first?.allColumns ?? []
            }
            let before = try await read()
            XCTAssertEqual(before, ["a"])
            try await sql.raw("ALTER TABLE evolving ADD COLUMN b TEXT").run()
            let after = try await read()
            XCTAssertEqual(after, ["a", "b"], "the kept statement was compiled again with the new column")
            let recompiled = try await connection.recompilations()
            XCTAssertGreaterThan(recompiled, 0)
        }
    }
}
