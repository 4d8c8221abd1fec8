// The push_challenges table: enrollment and login challenges, created, resolved and expired atomically.
import Foundation
import SQLKit

public struct SQLPushChallengeStore: PushChallengeStore {
    let database: KeywardDatabase

    public init(database: KeywardDatabase) {
        self.database = database
    }

    public func insertChallenge(_ challenge: PushChallenge) async throws {
        try await StoreErrorMapping.mapping(
            "insertChallenge", conflict: "challenge \(challenge.id) exists already", missingParent: "realm '\(challenge.realm)' does not exist"
        ) {
            try await Self.insert(challenge, into: database.sql)
        }
    }

    private static func insert(_ challenge: PushChallenge, into sql: any SQLDatabase) async throws {
        try await sql.raw("""
            INSERT INTO push_challenges (\(unsafeRaw: insertColumns))
            VALUES (\(values(challenge)))
            """).run()
    }

    private static let insertColumns = """
        id, realm, user_id, kind, status, nonce, credential_id, client_id, session_id, watch_secret_hash, uv_mode, uv_value, \
        uv_options, uv_failures, created_at, expires_at, resolved_at
        """

    private static func values(_ challenge: PushChallenge) -> SQLQueryString {
        """
        \(bind: challenge.id), \(bind: challenge.realm), \(bind: challenge.userId), \(bind: challenge.kind.rawValue), \
        \(bind: challenge.status.rawValue), \(bind: challenge.nonce), \(bind: challenge.credentialId), \(bind: challenge.clientId), \
        \(bind: challenge.sessionId), \(bind: challenge.watchSecretHash), \(bind: challenge.userVerification.mode.rawValue), \
        \(bind: challenge.userVerification.storedValue), \(bind: challenge.userVerification.storedOptions), \
        \(bind: challenge.userVerificationFailures), \(bind: StorageTime.milliseconds(challenge.createdAt)), \
        \(bind: StorageTime.milliseconds(challenge.expiresAt)), \(bind: challenge.resolvedAt.map(StorageTime.milliseconds))
        """
    }

    public func createLoginChallenge(_ challenge: PushChallenge, maxPending: Int, now: Date) async throws -> [String]? {
        try await StoreErrorMapping.mapping("createLoginChallenge", missingParent: "realm '\(challenge.realm)' does not exist") {
            switch database.engine {
            case .sqlite:
                // SQLite runs each statement under the database's write lock, so the limit check and the insert
                // are one atomic statement. No transaction: holding the lock across round trips to the database
                // thread would make every other writer wait in SQLite's busy handler.
                let replaced = try await Self.deleteSessionChallenge(challenge, in: database.sql)
                return try await Self.insertIfRoom(challenge, maxPending: maxPending, now: now, into: database.sql) ? replaced : nil
            case .postgres:
                // Under READ COMMITTED two concurrent INSERT … SELECT could both see room, so creation is serialised
                // per user (across nodes) by an advisory lock, and the count runs under it (migration 7's function).
                let outcome = try await database.sql.raw("""
                    SELECT replaced_ids, inserted
                    FROM keyward_create_login_challenge(\(Self.values(challenge)), \(bind: maxPending), \(bind: StorageTime.milliseconds(now)))
                    """).first()
                guard let outcome, try outcome.decode(column: "inserted", as: Bool.self) else { return nil }
                return try outcome.decode(column: "replaced_ids", as: [String].self)
            }
        }
    }

    /// Inserts the challenge unless the user has `maxPending` pending login challenges already; true when inserted.
    private static func insertIfRoom(_ challenge: PushChallenge, maxPending: Int, now: Date, into sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("""
            INSERT INTO push_challenges (\(unsafeRaw: insertColumns))
            SELECT \(values(challenge))
            WHERE (\(countPending(challenge, now: now))) < \(bind: maxPending)
            RETURNING id
            """).first() != nil
    }

    /// Resend and a new password entry replace the challenge this browser session is already waiting for.
    private static func deleteSessionChallenge(_ challenge: PushChallenge, in sql: any SQLDatabase) async throws -> [String] {
        guard challenge.sessionId != nil else { return [] }
        return try await sql.raw(deletingSessionChallenge(challenge)).all(decodingColumn: "id", as: String.self)
    }

    /// Deletes nothing when the challenge has no session (`session_id = NULL` is never true).
    private static func deletingSessionChallenge(_ challenge: PushChallenge) -> SQLQueryString {
        """
        DELETE FROM push_challenges
        WHERE realm = \(bind: challenge.realm) AND user_id = \(bind: challenge.userId) AND kind = 'AUTHENTICATION'
          AND status = 'PENDING' AND session_id = \(bind: challenge.sessionId)
        RETURNING id
        """
    }

    private static func countPending(_ challenge: PushChallenge, now: Date) -> SQLQueryString {
        """
        SELECT COUNT(*) AS pending FROM push_challenges
        WHERE realm = \(bind: challenge.realm) AND user_id = \(bind: challenge.userId) AND kind = 'AUTHENTICATION'
          AND status = 'PENDING' AND expires_at > \(bind: StorageTime.milliseconds(now))
        """
    }

    public func challenge(id: String, now: Date) async throws -> PushChallenge? {
        try await StoreErrorMapping.mapping("challenge(id:)") {
            guard let stored = try await database.sql.raw("SELECT \(unsafeRaw: Self.columns) FROM push_challenges WHERE id = \(bind: id)")
                .first().map(Self.challenge(from:))
            else { return nil }
            guard stored.effectiveStatus(at: now) == .expired, stored.status == .pending else { return stored }
            // Lazy expiry, written once so every node and the audit trail agree on it.
            let expired = try await database.sql.raw("""
                UPDATE push_challenges SET status = 'EXPIRED', resolved_at = expires_at
                WHERE id = \(bind: id) AND status = 'PENDING' RETURNING \(unsafeRaw: Self.columns)
                """).first().map(Self.challenge(from:))
            if let expired { return expired }
            return try await database.sql.raw("SELECT \(unsafeRaw: Self.columns) FROM push_challenges WHERE id = \(bind: id)")
                .first().map(Self.challenge(from:))
        }
    }

    public func pendingChallenges(realm: String, userId: String, kind: PushChallenge.Kind, now: Date) async throws -> [PushChallenge] {
        try await StoreErrorMapping.mapping("pendingChallenges") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns) FROM push_challenges
                WHERE realm = \(bind: realm) AND user_id = \(bind: userId) AND kind = \(bind: kind.rawValue)
                  AND status = 'PENDING' AND expires_at > \(bind: StorageTime.milliseconds(now))
                ORDER BY created_at, id
                """).all().map(Self.challenge(from:))
        }
    }

    public func resolve(id: String, to status: PushChallenge.Status, now: Date) async throws -> ChallengeResolution {
        try await StoreErrorMapping.mapping("resolve") {
            let applied = status == .approved
                ? try await approve(id: id, now: now)
                : try await Self.resolvePending(database.sql, id: id, to: status, now: now)
            if let applied { return .applied(applied) }
            return try await challenge(id: id, now: now).map(ChallengeResolution.alreadyFinal) ?? .notFound
        }
    }

    /// An approved login also ends the user's wait-challenge state. PostgreSQL does both in one statement;
    /// SQLite, whose statements change one table each, in two.
    private func approve(id: String, now: Date) async throws -> PushChallenge? {
        switch database.engine {
        case .postgres:
            return try await database.sql.raw("""
                WITH approved AS (\(Self.resolving(id, to: .approved, now: now))),
                reset AS (
                    DELETE FROM push_wait_states USING approved
                    WHERE approved.kind = 'AUTHENTICATION' AND push_wait_states.realm = approved.realm
                      AND push_wait_states.user_id = approved.user_id
                )
                SELECT \(unsafeRaw: Self.columns) FROM approved
                """).first().map(Self.challenge(from:))
        case .sqlite:
            guard let approved = try await Self.resolvePending(database.sql, id: id, to: .approved, now: now) else { return nil }
            if approved.kind == .authentication {
                try await SQLPushMFAStateStore.deleteWaitState(realm: approved.realm, userId: approved.userId, in: database.sql)
            }
            return approved
        }
    }

    /// The single statement every resolution goes through, so two racing responses cannot both win.
    static func resolvePending(_ sql: any SQLDatabase, id: String, to status: PushChallenge.Status, now: Date) async throws -> PushChallenge? {
        try await sql.raw(resolving(id, to: status, now: now)).first().map(challenge(from:))
    }

    private static func resolving(_ id: String, to status: PushChallenge.Status, now: Date) -> SQLQueryString {
        let nowMillis = StorageTime.milliseconds(now)
        return """
            UPDATE push_challenges SET status = \(bind: status.rawValue), resolved_at = \(bind: nowMillis)
            WHERE id = \(bind: id) AND status = 'PENDING' AND expires_at > \(bind: nowMillis)
            RETURNING \(unsafeRaw: columns)
            """
    }

    public func recordVerificationFailure(id: String, limit: Int, now: Date) async throws -> PushChallenge? {
        try await StoreErrorMapping.mapping("recordVerificationFailure") {
            let nowMillis = StorageTime.milliseconds(now)
            return try await database.sql.raw("""
                UPDATE push_challenges SET
                    uv_failures = uv_failures + 1,
                    status = CASE WHEN uv_failures + 1 >= \(bind: limit) THEN 'DENIED' ELSE status END,
                    resolved_at = CASE WHEN uv_failures + 1 >= \(bind: limit) THEN \(bind: nowMillis) ELSE resolved_at END
                WHERE id = \(bind: id) AND status = 'PENDING' AND expires_at > \(bind: nowMillis)
                RETURNING \(unsafeRaw: Self.columns)
                """).first().map(Self.challenge(from:))
        }
    }

    public func resolveAllPending(realm: String, userId: String, to status: PushChallenge.Status, now: Date) async throws -> [PushChallenge] {
        try await StoreErrorMapping.mapping("resolveAllPending") {
            let nowMillis = StorageTime.milliseconds(now)
            return try await database.sql.raw("""
                UPDATE push_challenges SET status = \(bind: status.rawValue), resolved_at = \(bind: nowMillis)
                WHERE realm = \(bind: realm) AND user_id = \(bind: userId) AND status = 'PENDING' AND expires_at > \(bind: nowMillis)
                RETURNING \(unsafeRaw: Self.columns)
                """).all().map(Self.challenge(from:))
        }
    }

    public func deleteChallenge(id: String) async throws {
        try await StoreErrorMapping.mapping("deleteChallenge") {
            try await database.sql.raw("DELETE FROM push_challenges WHERE id = \(bind: id)").run()
        }
    }

    public func sweepChallenges(now: Date, deleteEndedBefore: Date) async throws -> (expired: Int, deleted: Int) {
        try await StoreErrorMapping.mapping("sweepChallenges") {
            let expired = try await database.sql.countingRows("""
                UPDATE push_challenges SET status = 'EXPIRED', resolved_at = expires_at
                WHERE status = 'PENDING' AND expires_at <= \(bind: StorageTime.milliseconds(now)) RETURNING 1 AS expired
                """)
            let cutoff = StorageTime.milliseconds(deleteEndedBefore)
            let deleted = try await database.sql.countingRows("""
                DELETE FROM push_challenges WHERE status <> 'PENDING' AND resolved_at <= \(bind: cutoff) RETURNING 1 AS deleted
                """)
            _ = try await database.sql.countingRows("""
                DELETE FROM push_enroll_requests WHERE expires_at <= \(bind: StorageTime.milliseconds(now)) RETURNING 1 AS deleted
                """)
            return (expired, deleted)
        }
    }

    public func insertEnrollmentRequest(_ request: EnrollmentRequest) async throws {
        try await StoreErrorMapping.mapping("insertEnrollmentRequest", conflict: "enrollment request handle exists already") {
            try await database.sql.raw("""
                INSERT INTO push_enroll_requests (handle, realm, user_id, challenge_id, expires_at)
                VALUES (\(bind: request.handle), \(bind: request.realm), \(bind: request.userId), \(bind: request.challengeId),
                    \(bind: StorageTime.milliseconds(request.expiresAt)))
                """).run()
        }
    }

    public func enrollmentRequest(handle: String, now: Date) async throws -> EnrollmentRequest? {
        try await StoreErrorMapping.mapping("enrollmentRequest") {
            try await database.sql.raw("""
                SELECT handle, realm, user_id, challenge_id, expires_at FROM push_enroll_requests
                WHERE handle = \(bind: handle) AND expires_at > \(bind: StorageTime.milliseconds(now))
                """).first().map(Self.enrollmentRequest(from:))
        }
    }

    public func enrollmentRequest(challengeId: String, now: Date) async throws -> EnrollmentRequest? {
        try await StoreErrorMapping.mapping("enrollmentRequest(challengeId:)") {
            try await database.sql.raw("""
                SELECT handle, realm, user_id, challenge_id, expires_at FROM push_enroll_requests
                WHERE challenge_id = \(bind: challengeId) AND expires_at > \(bind: StorageTime.milliseconds(now))
                ORDER BY expires_at DESC, handle LIMIT 1
                """).first().map(Self.enrollmentRequest(from:))
        }
    }

    private static func enrollmentRequest(from row: any SQLRow) throws -> EnrollmentRequest {
        EnrollmentRequest(
            handle: try row.decode(column: "handle", as: String.self),
            realm: try row.decode(column: "realm", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            challengeId: try row.decode(column: "challenge_id", as: String.self),
            expiresAt: StorageTime.date(milliseconds: try row.decode(column: "expires_at", as: Int64.self))
        )
    }

    public func deleteEnrollmentRequest(handle: String) async throws {
        try await StoreErrorMapping.mapping("deleteEnrollmentRequest") {
            try await database.sql.raw("DELETE FROM push_enroll_requests WHERE handle = \(bind: handle)").run()
        }
    }

    static let columns = """
        id, realm, user_id, kind, status, nonce, credential_id, client_id, session_id, watch_secret_hash,
        uv_mode, uv_value, uv_options, uv_failures, created_at, expires_at, resolved_at
        """

    static func challenge(from row: any SQLRow) throws -> PushChallenge {
        let kind = try row.decode(column: "kind", as: String.self)
        let status = try row.decode(column: "status", as: String.self)
        return PushChallenge(
            id: try row.decode(column: "id", as: String.self),
            realm: try row.decode(column: "realm", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            kind: PushChallenge.Kind(rawValue: kind) ?? .authentication,
            status: PushChallenge.Status(rawValue: status) ?? .expired,
            nonce: try row.decode(column: "nonce", as: String.self),
            credentialId: try row.decode(column: "credential_id", as: String?.self),
            clientId: try row.decode(column: "client_id", as: String?.self),
            sessionId: try row.decode(column: "session_id", as: String?.self),
            watchSecretHash: try row.decode(column: "watch_secret_hash", as: String.self),
            userVerification: UserVerification(
                storedMode: try row.decode(column: "uv_mode", as: String.self),
                value: try row.decode(column: "uv_value", as: String?.self),
                options: try row.decode(column: "uv_options", as: String?.self)
            ),
            userVerificationFailures: try row.decode(column: "uv_failures", as: Int.self),
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            expiresAt: StorageTime.date(milliseconds: try row.decode(column: "expires_at", as: Int64.self)),
            resolvedAt: try row.decode(column: "resolved_at", as: Int64?.self).map(StorageTime.date(milliseconds:))
        )
    }
}
