// Test support: the database engines tests run on, and a fresh empty database with a data directory per test.
import Foundation
import KeywardServer
import Logging
import SQLKit
import XCTest

/// The database engines tests run on: SQLite always, PostgreSQL when `KEYWARD_TEST_POSTGRES_URL` is set.
/// In CI (`CI=true`) a missing PostgreSQL is a failure, never a silent skip.
enum TestDatabase {
    static var postgresURL: String? {
        ProcessInfo.processInfo.environment["KEYWARD_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    static func enginesUnderTest() throws -> [DatabaseEngine] {
        if postgresURL != nil { return [.sqlite, .postgres] }
        if ProcessInfo.processInfo.environment["CI"] == "true" { throw CIError() }
        return [.sqlite]
    }

    struct CIError: Error, CustomStringConvertible {
        var description: String { "KEYWARD_TEST_POSTGRES_URL is not set, but CI=true requires the PostgreSQL tests to run" }
    }

    /// Runs `body` with the URL of a brand-new empty database and a fresh data directory; removes both after.
    static func withFreshDatabase(_ engine: DatabaseEngine, _ body: (_ databaseURL: String, _ dataDirectory: String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        switch engine {
        case .sqlite:
            try await body("sqlite:" + directory.appendingPathComponent("keyward.db").path, directory.path)
        case .postgres:
            // A schema of its own per test (CREATE SCHEMA is far cheaper than CREATE DATABASE), dropped after.
            guard let baseURL = postgresURL, var components = URLComponents(string: baseURL) else { throw CIError() }
            let schema = "kwtest_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
            components.queryItems = (components.queryItems ?? []).filter { $0.name != "search_path" } + [URLQueryItem(name: "search_path", value: schema)]
            let admin = try await KeywardDatabase.open(try DatabaseConfiguration(url: baseURL), logger: Logger(label: "keyward-test-admin"))
            do {
                try await admin.sql.raw("CREATE SCHEMA \(ident: schema)").run()
                do {
                    try await body(components.string!, directory.path)
                } catch {
                    try? await admin.sql.raw("DROP SCHEMA \(ident: schema) CASCADE").run()
                    throw error
                }
                try await admin.sql.raw("DROP SCHEMA \(ident: schema) CASCADE").run()
            } catch {
                try? await admin.close()
                throw error
            }
            try await admin.close()
        }
    }
}
