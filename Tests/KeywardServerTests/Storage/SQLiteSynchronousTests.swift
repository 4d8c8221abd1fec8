// Tests: `sqlite.synchronous` reaches every connection of the embedded database.
import Foundation
import Logging
import SQLKit
import XCTest

@testable import KeywardServer

/// The setting must hold on the statement connection and on the transaction connection alike: a commit through
/// either is an answer someone was given.
final class SQLiteSynchronousTests: XCTestCase {
    func testEachSettingReachesBothWritingConnections() async throws {
        // SQLite reports the level as a number: 1 is NORMAL, 2 is FULL.
        for (setting, level) in [(SQLiteSynchronous.full, 2), (.normal, 1)] {
            try await TestDatabase.withFreshDatabase(.sqlite) { url, _ in
                let database = try await KeywardDatabase.open(
                    try DatabaseConfiguration(url: url), synchronous: setting, logger: StorageTestHarness.logger
                )
                do {
                    let statements = try await database.sql.raw("PRAGMA synchronous").first()?.decode(column: "synchronous", as: Int.self)
                    let transactions = try await database.transaction { session in
                        try await session.raw("PRAGMA synchronous").first()?.decode(column: "synchronous", as: Int.self)
                    }
                    XCTAssertEqual(statements, level, "statement connection, \(setting)")
                    XCTAssertEqual(transactions, level, "transaction connection, \(setting)")
                } catch {
                    try? await database.close()
                    throw error
                }
                try await database.close()
            }
        }
    }

    func testTheDefaultIsFull() async throws {
        try await TestDatabase.withFreshDatabase(.sqlite) { url, _ in
            let database = try await KeywardDatabase.open(try DatabaseConfiguration(url: url), logger: StorageTestHarness.logger)
            let level = try? await database.sql.raw("PRAGMA synchronous").first()?.decode(column: "synchronous", as: Int.self)
            try await database.close()
            XCTAssertEqual(level, 2)
        }
    }
}
