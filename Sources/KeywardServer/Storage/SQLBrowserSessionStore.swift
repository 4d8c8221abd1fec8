import Foundation
import SQLKit

public struct SQLBrowserSessionStore: BrowserSessionStore {
    let database: KeywardDatabase

    public init(database: KeywardDatabase) {
        self.database = database
    }

    public func insertSession(_ session: BrowserSession) async throws {
        try await StoreErrorMapping.mapping("insertSession", conflict: "session exists already", missingParent: "realm '\(session.realm)' does not exist") {
            try await database.sql.raw("""
                INSERT INTO browser_sessions (id_hash, realm, user_id, stage, csrf_token, return_to, client_id, challenge_id,
                    challenge_secret, enrollment_id, enrollment_secret, created_at, last_seen_at, expires_at)
                VALUES (\(bind: session.idHash), \(bind: session.realm), \(bind: session.userId), \(bind: session.stage.rawValue),
                    \(bind: session.csrfToken), \(bind: session.returnTo), \(bind: session.clientId), \(bind: session.challengeId),
                    \(bind: session.challengeSecret), \(bind: session.enrollmentId), \(bind: session.enrollmentSecret),
                    \(bind: StorageTime.milliseconds(session.createdAt)), \(bind: StorageTime.milliseconds(session.lastSeenAt)),
                    \(bind: StorageTime.milliseconds(session.expiresAt)))
                """).run()
        }
    }

    public func session(idHash: String, now: Date) async throws -> BrowserSession? {
        try await StoreErrorMapping.mapping("session(idHash:)") {
            try await database.sql.raw("""
                SELECT id_hash, realm, user_id, stage, csrf_token, return_to, client_id, challenge_id, challenge_secret,
                    enrollment_id, enrollment_secret, created_at, last_seen_at, expires_at
                FROM browser_sessions WHERE id_hash = \(bind: idHash) AND expires_at > \(bind: StorageTime.milliseconds(now))
                """).first().map { row in
                BrowserSession(
                    idHash: try row.decode(column: "id_hash", as: String.self),
                    realm: try row.decode(column: "realm", as: String.self),
                    userId: try row.decode(column: "user_id", as: String?.self),
                    stage: BrowserSession.Stage(rawValue: try row.decode(column: "stage", as: String.self)) ?? .anonymous,
                    csrfToken: try row.decode(column: "csrf_token", as: String.self),
                    returnTo: try row.decode(column: "return_to", as: String?.self),
                    clientId: try row.decode(column: "client_id", as: String?.self),
                    challengeId: try row.decode(column: "challenge_id", as: String?.self),
                    challengeSecret: try row.decode(column: "challenge_secret", as: String?.self),
                    enrollmentId: try row.decode(column: "enrollment_id", as: String?.self),
                    enrollmentSecret: try row.decode(column: "enrollment_secret", as: String?.self),
                    createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
                    lastSeenAt: StorageTime.date(milliseconds: try row.decode(column: "last_seen_at", as: Int64.self)),
                    expiresAt: StorageTime.date(milliseconds: try row.decode(column: "expires_at", as: Int64.self))
                )
            }
        }
    }

    public func updateSession(_ session: BrowserSession) async throws {
        try await StoreErrorMapping.mapping("updateSession") {
            try await database.sql.raw("""
                UPDATE browser_sessions SET user_id = \(bind: session.userId), stage = \(bind: session.stage.rawValue),
                    csrf_token = \(bind: session.csrfToken), return_to = \(bind: session.returnTo), client_id = \(bind: session.clientId),
                    challenge_id = \(bind: session.challengeId), challenge_secret = \(bind: session.challengeSecret),
                    enrollment_id = \(bind: session.enrollmentId), enrollment_secret = \(bind: session.enrollmentSecret),
                    last_seen_at = \(bind: StorageTime.milliseconds(session.lastSeenAt)), expires_at = \(bind: StorageTime.milliseconds(session.expiresAt))
                WHERE id_hash = \(bind: session.idHash)
                """).run()
        }
    }

    public func deleteSession(idHash: String) async throws {
        try await StoreErrorMapping.mapping("deleteSession") {
            try await database.sql.raw("DELETE FROM browser_sessions WHERE id_hash = \(bind: idHash)").run()
        }
    }

    public func deleteExpiredSessions(now: Date) async throws -> Int {
        try await StoreErrorMapping.mapping("deleteExpiredSessions") {
            try await database.sql.countingRows("""
                DELETE FROM browser_sessions WHERE expires_at <= \(bind: StorageTime.milliseconds(now)) RETURNING 1 AS deleted
                """)
        }
    }
}
