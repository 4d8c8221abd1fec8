// Tests: the SQLite checkpointer copies committed write-ahead log pages back into the database file.
import Foundation
import Logging
import SQLKit
import XCTest

@testable import KeywardServer

/// The write-ahead log is copied back into the database file by the checkpointer, not only when a commit crosses
/// the (large) automatic threshold.
final class SQLiteCheckpointerTests: XCTestCase {
    func testCommittedPagesReachTheDatabaseFileWithoutACommitCheckpointing() async throws {
        try await TestDatabase.withFreshDatabase(.sqlite) { url, directory in
            let database = try await KeywardDatabase.open(try DatabaseConfiguration(url: url), logger: StorageTestHarness.logger)
            do {
                let file = URL(fileURLWithPath: directory).appendingPathComponent("keyward.db").path
                try await database.sql.raw("CREATE TABLE filler (id INTEGER PRIMARY KEY, body BLOB NOT NULL)").run()
                let written = 800 // rows of 4 KiB: about 800 pages, far below SQLiteCheckpointer.fallbackPages
                for id in 0..<written {
                    try await database.sql.raw("INSERT INTO filler (id, body) VALUES (\(bind: id), zeroblob(4096))").run()
                }
                XCTAssertLessThan(written, SQLiteCheckpointer.fallbackPages)
                let wanted = written * 4096
                var size = 0
                for _ in 0..<300 where size < wanted {
                    size = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
                    if size < wanted { try await Task.sleep(for: .milliseconds(50)) }
                }
                XCTAssertGreaterThanOrEqual(size, wanted, "the rows never left the write-ahead log")
                let count = try await database.sql.raw("SELECT count(*) AS n FROM filler").first()?.decode(column: "n", as: Int.self)
                XCTAssertEqual(count, written)
            } catch {
                try? await database.close()
                throw error
            }
            try await database.close()
        }
    }
}
