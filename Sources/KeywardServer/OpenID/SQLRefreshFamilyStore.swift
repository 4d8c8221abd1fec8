// The oidc_refresh_families table: a family's row, its revocation, and its uses written a group at a time.
import Foundation
import SQLKit

struct SQLRefreshFamilyStore: RefreshFamilyStore {
    let database: KeywardDatabase

    func insert(_ family: RefreshFamily) async throws -> Bool {
        try await StoreErrorMapping.mapping("insertRefreshFamily", missingParent: "the client or user of the family is gone") {
            try await database.sql.countingRows("""
                INSERT INTO oidc_refresh_families (\(unsafeRaw: Self.columns))
                VALUES \(Self.values(family))
                ON CONFLICT (id) DO NOTHING
                RETURNING id
                """) == 1
        }
    }

    func family(realm: String, id: String) async throws -> RefreshFamily? {
        try await StoreErrorMapping.mapping("refreshFamily") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns) FROM oidc_refresh_families WHERE id = \(bind: id) AND realm = \(bind: realm)
                """).first().map(Self.family(from:))
        }
    }

    /// One statement for a group of refreshes. A family twice in the group keeps its newest use, and a use older
    /// than what is written already changes nothing: the writes of concurrent groups may land in any order.
    func recordUses(_ uses: [RefreshFamilyUse]) async throws {
        var newest: [String: RefreshFamilyUse] = [:]
        for use in uses where use.generation > newest[use.familyId]?.generation ?? -1 { newest[use.familyId] = use }
        guard !newest.isEmpty else { return }
        let rows = newest.values.sorted { $0.familyId < $1.familyId }.map { use in
            SQLQueryString("(\(bind: use.familyId), \(bind: use.generation), \(bind: StorageTime.milliseconds(use.at)))")
        }
        try await StoreErrorMapping.mapping("recordRefreshFamilyUses") {
            // VALUES names its columns column1, column2, … on both engines.
            try await database.sql.raw("""
                UPDATE oidc_refresh_families SET generation = uses.column2, last_used_at = uses.column3
                FROM (VALUES \(rows.joined(separator: ", "))) AS uses
                WHERE oidc_refresh_families.id = uses.column1 AND oidc_refresh_families.generation < uses.column2
                """).run()
        }
    }

    func revoke(_ family: RefreshFamily, now: Date) async throws -> Bool {
        var revoked = family
        revoked.revokedAt = now
        return try await StoreErrorMapping.mapping("revokeRefreshFamily", missingParent: "the client or user of the family is gone") {
            // A row comes back when this statement revoked the family or wrote it revoked; none when it was revoked already.
            let rows = try await database.sql.raw("""
                INSERT INTO oidc_refresh_families (\(unsafeRaw: Self.columns))
                VALUES \(Self.values(revoked))
                ON CONFLICT (id) DO UPDATE SET revoked_at = excluded.revoked_at
                WHERE oidc_refresh_families.revoked_at IS NULL
                RETURNING id
                """).all()
            return !rows.isEmpty
        }
    }

    func revokeAll(realm: String, userId: String, now: Date) async throws -> Int {
        try await StoreErrorMapping.mapping("revokeUserRefreshFamilies") {
            try await database.sql.countingRows("""
                UPDATE oidc_refresh_families SET revoked_at = \(bind: StorageTime.milliseconds(now))
                WHERE realm = \(bind: realm) AND user_id = \(bind: userId) AND revoked_at IS NULL
                RETURNING id
                """)
        }
    }

    func rebind(realm: String, from: String, to: String) async throws -> Int {
        try await StoreErrorMapping.mapping("rebindRefreshFamilies") {
            try await database.sql.countingRows("""
                UPDATE oidc_refresh_families SET jkt = \(bind: to)
                WHERE realm = \(bind: realm) AND jkt = \(bind: from) AND revoked_at IS NULL
                RETURNING id
                """)
        }
    }

    func revokeAll(realm: String, jkt: String, now: Date) async throws -> Int {
        try await StoreErrorMapping.mapping("revokeKeyRefreshFamilies") {
            try await database.sql.countingRows("""
                UPDATE oidc_refresh_families SET revoked_at = \(bind: StorageTime.milliseconds(now))
                WHERE realm = \(bind: realm) AND jkt = \(bind: jkt) AND revoked_at IS NULL
                RETURNING id
                """)
        }
    }

    func revokeAll(realm: String, userId: String, sessionIds: [String], now: Date) async throws -> Int {
        guard !sessionIds.isEmpty else { return 0 }
        let ids = SQLList(sessionIds.map { SQLBind($0) })
        return try await StoreErrorMapping.mapping("revokeSessionRefreshFamilies") {
            try await database.sql.countingRows("""
                UPDATE oidc_refresh_families SET revoked_at = \(bind: StorageTime.milliseconds(now))
                WHERE realm = \(bind: realm) AND user_id = \(bind: userId) AND session_id IN (\(ids)) AND revoked_at IS NULL
                RETURNING id
                """)
        }
    }

    func liveFamilies(realm: String, userId: String, now: Date) async throws -> [RefreshFamily] {
        try await StoreErrorMapping.mapping("liveRefreshFamilies") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns) FROM oidc_refresh_families
                WHERE realm = \(bind: realm) AND user_id = \(bind: userId) AND revoked_at IS NULL AND expires_at > \(bind: StorageTime.milliseconds(now))
                ORDER BY created_at DESC
                """).all().map(Self.family(from:))
        }
    }

    func revoke(realm: String, userId: String, id: String, now: Date) async throws -> Bool {
        try await StoreErrorMapping.mapping("revokeUserRefreshFamily") {
            try await database.sql.countingRows("""
                UPDATE oidc_refresh_families SET revoked_at = \(bind: StorageTime.milliseconds(now))
                WHERE id = \(bind: id) AND realm = \(bind: realm) AND user_id = \(bind: userId) AND revoked_at IS NULL
                    AND expires_at > \(bind: StorageTime.milliseconds(now))
                RETURNING id
                """) == 1
        }
    }

    func deleteExpired(now: Date) async throws -> Int {
        try await StoreErrorMapping.mapping("deleteExpiredRefreshFamilies") {
            try await database.sql.countingRows("""
                DELETE FROM oidc_refresh_families WHERE expires_at <= \(bind: StorageTime.milliseconds(now)) RETURNING id
                """)
        }
    }

    private static let columns = """
        id, realm, client_id, user_id, session_id, scope, jkt, auth_time, amr, acr, generation, created_at, last_used_at, expires_at, revoked_at
        """

    private static func values(_ family: RefreshFamily) -> SQLQueryString {
        """
        (\(bind: family.id), \(bind: family.realm), \(bind: family.clientId), \(bind: family.userId), \(bind: family.sessionId),
            \(bind: family.scope), \(bind: family.jkt), \(bind: StorageTime.milliseconds(family.authTime)), \(bind: family.amr.joined(separator: " ")),
            \(bind: family.acr), \(bind: family.generation), \(bind: StorageTime.milliseconds(family.createdAt)),
            \(bind: StorageTime.milliseconds(family.lastUsedAt)), \(bind: StorageTime.milliseconds(family.expiresAt)),
            \(bind: family.revokedAt.map(StorageTime.milliseconds)))
        """
    }

    private static func family(from row: any SQLRow) throws -> RefreshFamily {
        RefreshFamily(
            id: try row.decode(column: "id", as: String.self),
            realm: try row.decode(column: "realm", as: String.self),
            clientId: try row.decode(column: "client_id", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            sessionId: try row.decode(column: "session_id", as: String.self),
            scope: try row.decode(column: "scope", as: String.self),
            jkt: try row.decode(column: "jkt", as: String?.self),
            authTime: StorageTime.date(milliseconds: try row.decode(column: "auth_time", as: Int64.self)),
            amr: try row.decode(column: "amr", as: String.self).split(separator: " ").map(String.init),
            acr: try row.decode(column: "acr", as: String.self),
            generation: try row.decode(column: "generation", as: Int64.self),
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            lastUsedAt: StorageTime.date(milliseconds: try row.decode(column: "last_used_at", as: Int64.self)),
            expiresAt: StorageTime.date(milliseconds: try row.decode(column: "expires_at", as: Int64.self)),
            revokedAt: try row.decode(column: "revoked_at", as: Int64?.self).map { StorageTime.date(milliseconds: $0) }
        )
    }
}
