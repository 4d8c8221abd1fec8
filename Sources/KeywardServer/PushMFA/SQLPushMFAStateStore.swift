// Push MFA's per-realm settings and per-user wait-challenge state.
import Foundation
import KeywardJOSE
import SQLKit

public struct SQLPushMFAStateStore: PushMFAStateStore {
    let database: KeywardDatabase

    public init(database: KeywardDatabase) {
        self.database = database
    }

    public func settings(realm: String) async throws -> PushMFASettings? {
        let stored = try await StoreErrorMapping.mapping("settings(realm:)") {
            try await database.sql.raw("SELECT settings FROM push_mfa_settings WHERE realm = \(bind: realm)")
                .first(decodingColumn: "settings", as: String.self)
        }
        return try stored.map { try Self.settings(fromJSON: $0, realm: realm) }
    }

    static func settings(fromJSON stored: String, realm: String) throws(StoreError) -> PushMFASettings {
        do {
            return try PushMFASettings(json: StrictJSON.parseObject(Array(stored.utf8)))
        } catch {
            throw StoreError.unavailable("stored push-MFA settings of realm '\(realm)' are unreadable: \(error)")
        }
    }

    public func saveSettings(_ settings: PushMFASettings, realm: String, now: Date) async throws {
        let json = String(decoding: StrictJSON.serialize(settings.jsonObject), as: UTF8.self)
        try await StoreErrorMapping.mapping("saveSettings", missingParent: "realm '\(realm)' does not exist") {
            try await database.sql.raw("""
                INSERT INTO push_mfa_settings (realm, settings, updated_at)
                VALUES (\(bind: realm), \(bind: json), \(bind: StorageTime.milliseconds(now)))
                ON CONFLICT (realm) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at
                """).run()
        }
    }

    public func waitState(realm: String, userId: String) async throws -> WaitChallengeState? {
        try await StoreErrorMapping.mapping("waitState") {
            try await database.sql.raw("""
                SELECT challenge_count, first_at, last_at FROM push_wait_states WHERE realm = \(bind: realm) AND user_id = \(bind: userId)
                """).first().map { row in
                WaitChallengeState(
                    challengeCount: try row.decode(column: "challenge_count", as: Int.self),
                    firstAt: StorageTime.date(milliseconds: try row.decode(column: "first_at", as: Int64.self)),
                    lastAt: StorageTime.date(milliseconds: try row.decode(column: "last_at", as: Int64.self))
                )
            }
        }
    }

    public func saveWaitState(_ state: WaitChallengeState, realm: String, userId: String) async throws {
        try await StoreErrorMapping.mapping("saveWaitState", missingParent: "realm '\(realm)' does not exist") {
            try await database.sql.raw("""
                INSERT INTO push_wait_states (realm, user_id, challenge_count, first_at, last_at)
                VALUES (\(bind: realm), \(bind: userId), \(bind: state.challengeCount), \(bind: StorageTime.milliseconds(state.firstAt)),
                    \(bind: StorageTime.milliseconds(state.lastAt)))
                ON CONFLICT (realm, user_id) DO UPDATE SET challenge_count = excluded.challenge_count,
                    first_at = excluded.first_at, last_at = excluded.last_at
                """).run()
        }
    }

    /// Approval clears it, in the challenge store's `resolve`.
    static func deleteWaitState(realm: String, userId: String, in sql: any SQLDatabase) async throws {
        try await sql.raw("DELETE FROM push_wait_states WHERE realm = \(bind: realm) AND user_id = \(bind: userId)").run()
    }
}
