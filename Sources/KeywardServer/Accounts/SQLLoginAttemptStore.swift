// The login_attempts table: sign-in attempt windows per username hash or client address key.
import Foundation
import SQLKit

public struct SQLLoginAttemptStore: LoginAttemptStore {
    let database: KeywardDatabase

    public init(database: KeywardDatabase) {
        self.database = database
    }

    /// One upsert, so concurrent attempts on any node each get their own count: none slips past the limit
    /// between a check and a write.
    public func countAttempt(realm: String, usernameHash: String, now: Date, window: TimeInterval) async throws -> LoginAttempts {
        try await StoreErrorMapping.mapping("countAttempt", missingParent: "realm '\(realm)' does not exist") {
            let nowMillis = StorageTime.milliseconds(now)
            let windowOpenedAfter = StorageTime.milliseconds(now.addingTimeInterval(-window))
            let row = try await database.sql.raw("""
                INSERT INTO login_attempts (realm, username_hash, attempts, window_start)
                VALUES (\(bind: realm), \(bind: usernameHash), 1, \(bind: nowMillis))
                ON CONFLICT (realm, username_hash) DO UPDATE SET
                    attempts = CASE WHEN login_attempts.window_start > \(bind: windowOpenedAfter) THEN login_attempts.attempts + 1 ELSE 1 END,
                    window_start = CASE WHEN login_attempts.window_start > \(bind: windowOpenedAfter) THEN login_attempts.window_start ELSE excluded.window_start END
                RETURNING attempts, window_start
                """).first()
            guard let row else { throw StoreError.unavailable("countAttempt returned no row") }
            return LoginAttempts(
                count: try row.decode(column: "attempts", as: Int.self),
                windowStart: StorageTime.date(milliseconds: try row.decode(column: "window_start", as: Int64.self))
            )
        }
    }

    public func clearAttempts(realm: String, usernameHash: String) async throws {
        try await StoreErrorMapping.mapping("clearAttempts") {
            try await database.sql.raw("""
                DELETE FROM login_attempts WHERE realm = \(bind: realm) AND username_hash = \(bind: usernameHash)
                """).run()
        }
    }

    public func deleteAttempts(windowStartedBefore cutoff: Date) async throws -> Int {
        try await StoreErrorMapping.mapping("deleteAttempts") {
            try await database.sql.countingRows("""
                DELETE FROM login_attempts WHERE window_start < \(bind: StorageTime.milliseconds(cutoff)) RETURNING 1 AS deleted
                """)
        }
    }
}
