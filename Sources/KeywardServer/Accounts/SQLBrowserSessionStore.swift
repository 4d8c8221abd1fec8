// The browser_sessions table, read only for users who are still enabled.
import Foundation
import SQLKit

/// Browser sessions in SQL. Reading a session joins `users` (the same part's table): a session whose user is
/// disabled or deleted is not returned, whatever else ended or failed to end it.
public struct SQLBrowserSessionStore: BrowserSessionStore {
    let database: KeywardDatabase

    /// Sessions begun by concurrent sign-ins are inserted together: one statement and one commit for the group.
    private let inserts: GroupCommit<BrowserSession, Result<Void, any Error>>

    /// Sessions a grouped statement inserts at most: 19 parameters each, well inside both engines' limits.
    static let maxGroup = 64

    public init(database: KeywardDatabase) {
        self.database = database
        inserts = GroupCommit(maxGroup: Self.maxGroup, executor: database.writerExecutor, writeTogether: { sessions in
            try await Self.insertStatement(sessions, database)
        })
    }

    /// Returns once the session is stored (or its insert failed), grouped with the sessions of other sign-ins under
    /// way: every sign-in writes one, and with a commit each they queued behind one another on SQLite. When a row of
    /// a group is refused, only the sign-in whose row is at fault (its realm deleted meanwhile) learns of it.
    public func insertSession(_ session: BrowserSession) async throws {
        try await inserts.submit(session).get()
    }

    private static func insertStatement(_ sessions: [BrowserSession], _ database: KeywardDatabase) async throws {
        let rows = sessions.map { session in
            SQLQueryString("""
                (\(bind: session.idHash), \(bind: session.realm), \(bind: session.userId), \(bind: session.stage.rawValue),
                    \(bind: session.csrfToken), \(bind: session.returnTo), \(bind: session.clientId), \(bind: session.challengeId),
                    \(bind: session.challengeSecret), \(bind: session.enrollmentId), \(bind: session.enrollmentSecret),
                    \(bind: amrText(session.amr)), \(bind: session.userAgent), \(bind: session.authenticatedAt.map(StorageTime.milliseconds)),
                    \(bind: session.signedInAt.map(StorageTime.milliseconds)), \(bind: session.sid), \(bind: StorageTime.milliseconds(session.createdAt)),
                    \(bind: StorageTime.milliseconds(session.lastSeenAt)), \(bind: StorageTime.milliseconds(session.expiresAt)))
                """)
        }
        let realm = sessions.count == 1 ? "realm '\(sessions[0].realm)'" : "the realm of a session"
        try await StoreErrorMapping.mapping("insertSession", conflict: "session exists already", missingParent: "\(realm) does not exist") {
            try await database.sql.raw("""
                INSERT INTO browser_sessions (id_hash, realm, user_id, stage, csrf_token, return_to, client_id, challenge_id,
                    challenge_secret, enrollment_id, enrollment_secret, amr, user_agent, authenticated_at, signed_in_at, sid, created_at, last_seen_at, expires_at)
                VALUES \(rows.joined(separator: ", "))
                """).run()
        }
    }

    public func session(idHash: String, now: Date) async throws -> BrowserSession? {
        try await StoreErrorMapping.mapping("session(idHash:)") {
            // TRUE written out, not bound: without the planner stability guarantee the statement connection asks
            // for (SQLiteStatementConnection.open), SQLite compiles a statement a second time at its first step when
            // a WHERE term it cannot answer from an index compares with a bound 0 or 1; a store's statement may also
            // run inside a transaction, on SQLiteNIO's connection.
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns)
                FROM browser_sessions s LEFT JOIN users u ON u.realm = s.realm AND u.id = s.user_id
                WHERE s.id_hash = \(bind: idHash) AND s.expires_at > \(bind: StorageTime.milliseconds(now))
                    AND (s.user_id IS NULL OR u.enabled = TRUE)
                """).first().map(Self.session(from:))
        }
    }

    public func updateSession(_ session: BrowserSession) async throws {
        try await StoreErrorMapping.mapping("updateSession") {
            try await database.sql.raw("""
                UPDATE browser_sessions SET user_id = \(bind: session.userId), stage = \(bind: session.stage.rawValue),
                    csrf_token = \(bind: session.csrfToken), return_to = \(bind: session.returnTo), client_id = \(bind: session.clientId),
                    challenge_id = \(bind: session.challengeId), challenge_secret = \(bind: session.challengeSecret),
                    enrollment_id = \(bind: session.enrollmentId), enrollment_secret = \(bind: session.enrollmentSecret),
                    amr = \(bind: Self.amrText(session.amr)), authenticated_at = \(bind: session.authenticatedAt.map(StorageTime.milliseconds)),
                    signed_in_at = \(bind: session.signedInAt.map(StorageTime.milliseconds)), sid = \(bind: session.sid),
                    last_seen_at = \(bind: StorageTime.milliseconds(session.lastSeenAt)),
                    expires_at = \(bind: StorageTime.milliseconds(session.expiresAt))
                WHERE id_hash = \(bind: session.idHash)
                """).run()
        }
    }

    private static let columns = """
        s.id_hash, s.realm, s.user_id, s.stage, s.csrf_token, s.return_to, s.client_id, s.challenge_id, s.challenge_secret,
        s.enrollment_id, s.enrollment_secret, s.amr, s.user_agent, s.authenticated_at, s.signed_in_at, s.sid, s.created_at, s.last_seen_at, s.expires_at
        """

    private static func session(from row: any SQLRow) throws -> BrowserSession {
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
            amr: (try row.decode(column: "amr", as: String?.self) ?? "").split(separator: " ").map(String.init),
            userAgent: try row.decode(column: "user_agent", as: String?.self),
            authenticatedAt: try row.decode(column: "authenticated_at", as: Int64?.self).map { StorageTime.date(milliseconds: $0) },
            signedInAt: try row.decode(column: "signed_in_at", as: Int64?.self).map { StorageTime.date(milliseconds: $0) },
            sid: try row.decode(column: "sid", as: String?.self),
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            lastSeenAt: StorageTime.date(milliseconds: try row.decode(column: "last_seen_at", as: Int64.self)),
            expiresAt: StorageTime.date(milliseconds: try row.decode(column: "expires_at", as: Int64.self))
        )
    }

    public func sessions(realm: String, userId: String, now: Date) async throws -> [BrowserSession] {
        try await StoreErrorMapping.mapping("sessions(realm:userId:)") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns) FROM browser_sessions s
                WHERE s.realm = \(bind: realm) AND s.user_id = \(bind: userId) AND s.expires_at > \(bind: StorageTime.milliseconds(now))
                ORDER BY s.created_at DESC
                """).all().map(Self.session(from:))
        }
    }

    public func deleteSession(realm: String, userId: String, idHash: String) async throws -> String? {
        try await StoreErrorMapping.mapping("deleteSession(realm:userId:idHash:)") {
            try await database.sql.raw("""
                DELETE FROM browser_sessions WHERE realm = \(bind: realm) AND user_id = \(bind: userId) AND id_hash = \(bind: idHash)
                RETURNING id_hash, sid
                """).first().map { row in try row.decode(column: "sid", as: String?.self) ?? row.decode(column: "id_hash", as: String.self) }
        }
    }

    private static func amrText(_ amr: [String]) -> String? {
        amr.isEmpty ? nil : amr.joined(separator: " ")
    }

    public func deleteSession(idHash: String) async throws {
        try await StoreErrorMapping.mapping("deleteSession") {
            try await database.sql.raw("DELETE FROM browser_sessions WHERE id_hash = \(bind: idHash)").run()
        }
    }

    public func deleteSessions(realm: String, userId: String) async throws -> Int {
        try await StoreErrorMapping.mapping("deleteSessions(realm:userId:)") {
            try await database.sql.countingRows("""
                DELETE FROM browser_sessions WHERE realm = \(bind: realm) AND user_id = \(bind: userId) RETURNING 1 AS deleted
                """)
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
