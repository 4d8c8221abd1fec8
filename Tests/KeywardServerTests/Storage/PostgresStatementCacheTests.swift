// Tests: PostgreSQL named prepared statements: which get names, server-side reuse, NULLs, refusals, and off.
import Foundation
import PostgresNIO
import SQLKit
import XCTest

@testable import KeywardServer

/// Named prepared statements on PostgreSQL: which statements get a name, that the server really holds them, and
/// that NULL parameters, refused preparations and `prepared_statements=off` still run every statement.
final class PostgresStatementCacheTests: XCTestCase {
    func testOnlyDataStatementsAreNamed() {
        for sql in ["SELECT 1", "select id FROM t", "INSERT INTO t VALUES ($1)", "UPDATE t SET a = 1", "DELETE FROM t", "WITH x AS (SELECT 1) SELECT * FROM x", "\n  SELECT 1"] {
            XCTAssertTrue(PostgresStatementCache.isNameable(sql), sql)
        }
        for sql in ["BEGIN", "COMMIT", "CREATE TABLE t (a int)", "ALTER TABLE t ADD b int", "LISTEN c", "SET search_path = x", "  "] {
            XCTAssertFalse(PostgresStatementCache.isNameable(sql), sql)
        }
    }

    func testOneNamePerTextAndParameterTypes() {
        let cache = PostgresStatementCache()
        let text = cache.name(sql: "SELECT $1", parameterTypes: [.int8])
        XCTAssertNotNil(text)
        XCTAssertEqual(cache.name(sql: "SELECT $1", parameterTypes: [.int8]), text)
        let null = cache.name(sql: "SELECT $1", parameterTypes: [nil])
        XCTAssertNotNil(null)
        XCTAssertNotEqual(null, text, "a NULL parameter has no type, so it must not share a statement typed int8")
        XCTAssertNotEqual(cache.name(sql: "SELECT $1", parameterTypes: [.text]), text)
        XCTAssertNil(cache.name(sql: "BEGIN", parameterTypes: []))
    }

    func testARefusedTextRunsUnnamedAndItsNameIsNotReused() throws {
        let cache = PostgresStatementCache()
        let refused = try XCTUnwrap(cache.name(sql: "SELECT a FROM later", parameterTypes: []))
        cache.refuse(name: refused)
        XCTAssertNil(cache.name(sql: "SELECT a FROM later", parameterTypes: []))
        XCTAssertNotEqual(cache.name(sql: "SELECT b FROM now", parameterTypes: []), refused)
    }

    func testNamesAreCapped() {
        let cache = PostgresStatementCache()
        for index in 0..<PostgresStatementCache.capacity {
            XCTAssertNotNil(cache.name(sql: "SELECT \(index)", parameterTypes: []))
        }
        XCTAssertNil(cache.name(sql: "SELECT -1", parameterTypes: []), "past the cap a new text runs unnamed")
        XCTAssertNotNil(cache.name(sql: "SELECT 0", parameterTypes: []), "texts named before the cap keep their name")
    }

    func testStatementsArePreparedOnceOnTheServer() async throws {
        try await StorageTestHarness.run(.postgres) { database in
            try await database.sql.withSession { session in
                for _ in 0..<3 { _ = try await session.raw("SELECT id FROM users WHERE realm = \(bind: "prep")").all() }
                let prepared = try await session.raw("SELECT name, statement FROM pg_prepared_statements").all()
                let texts = try prepared.map { try $0.decode(column: "statement", as: String.self) }
                XCTAssertEqual(texts.filter { $0.contains("FROM users") }.count, 1, "\(texts)")
                XCTAssertTrue(try prepared.allSatisfy { try $0.decode(column: "name", as: String.self).hasPrefix("keyward_") })
            }
        }
    }

    func testNullAndValueParametersOfOneTextAreBothPrepared() async throws {
        try await StorageTestHarness.run(.postgres) { database in
            try await database.sql.withSession { session in
                try await session.raw("CREATE TABLE prep_nulls (a BIGINT, b TEXT)").run()
                for (a, b) in [(Int64?.none, "first"), (Int64?.some(7), "second"), (Int64?.none, "third")] {
                    try await session.raw("INSERT INTO prep_nulls (a, b) VALUES (\(bind: a), \(bind: b))").run()
                }
                let rows = try await session.raw("SELECT a, b FROM prep_nulls ORDER BY b").all()
                XCTAssertEqual(try rows.map { try $0.decode(column: "b", as: String.self) }, ["first", "second", "third"])
                XCTAssertEqual(try rows.map { try $0.decode(column: "a", as: Int64?.self) }, [nil, 7, nil])
                let prepared = try await session.raw("SELECT statement FROM pg_prepared_statements").all()
                let inserts = try prepared.map { try $0.decode(column: "statement", as: String.self) }.filter { $0.hasPrefix("INSERT INTO prep_nulls") }
                XCTAssertEqual(inserts.count, 2, "one statement for a NULL first parameter, one for an int8")
            }
        }
    }

    func testAStatementRefusedOnceRunsAfterTheSchemaCatchesUp() async throws {
        try await StorageTestHarness.run(.postgres) { database in
            try await database.sql.withSession { session in
                await XCTAssertThrowsErrorAsync(try await session.raw("SELECT a FROM prep_later WHERE a = \(bind: Int64(1))").all())
                try await session.raw("CREATE TABLE prep_later (a BIGINT)").run()
                try await session.raw("INSERT INTO prep_later (a) VALUES (\(bind: Int64(1)))").run()
                let rows = try await session.raw("SELECT a FROM prep_later WHERE a = \(bind: Int64(1))").all()
                XCTAssertEqual(rows.count, 1, "a text refused once must not stay refused on this connection")
            }
        }
    }

    func testPreparedStatementsOffLeavesNoneOnTheServer() async throws {
        guard TestDatabase.postgresURL != nil else { throw XCTSkip("KEYWARD_TEST_POSTGRES_URL is not set") }
        try await TestDatabase.withFreshDatabase(.postgres) { url, _ in
            let database = try await KeywardDatabase.open(
                try DatabaseConfiguration(url: url + "&prepared_statements=off"), logger: StorageTestHarness.logger
            )
            do {
                try await database.sql.withSession { session in
                    for _ in 0..<3 { _ = try await session.raw("SELECT \(bind: Int64(1)) AS one").all() }
                    let prepared = try await session.raw("SELECT count(*) AS n FROM pg_prepared_statements").first()
                    XCTAssertEqual(try prepared?.decode(column: "n", as: Int64.self), 0)
                }
            } catch {
                try? await database.close()
                throw error
            }
            try await database.close()
        }
    }
}

private func XCTAssertThrowsErrorAsync<T>(
    _ expression: @autoclosure () async throws -> T, file: StaticString = #filePath, line: UInt = #line
) async {
    do {
        _ = try await expression()
        XCTFail("expected an error", file: file, line: line)
    } catch {}
}
