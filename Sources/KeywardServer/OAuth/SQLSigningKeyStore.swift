// The signing_keys table: realm keys, sealed private halves, activation and publication windows.
import Foundation
import SQLKit

public struct SQLSigningKeyStore: SigningKeyStore {
    let database: KeywardDatabase

    public init(database: KeywardDatabase) {
        self.database = database
    }

    /// Throws `.conflict` when the kid exists in the realm or when inserting a second active key,
    /// `.notFound` when the realm does not exist.
    public func insertKey(_ key: StoredSigningKey) async throws {
        try await StoreErrorMapping.mapping(
            "insertKey",
            conflict: "key '\(key.kid)' exists already, or realm '\(key.realm)' has an active key already",
            missingParent: "realm '\(key.realm)' does not exist"
        ) {
            try await Self.insert(key, into: database.sql)
        }
    }

    public func publishedKeys(realm: String, now: Date) async throws -> [StoredSigningKey] {
        try await StoreErrorMapping.mapping("publishedKeys") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns) FROM signing_keys
                WHERE realm = \(bind: realm)
                  AND (status = 'active' OR (status = 'retired' AND publish_until > \(bind: StorageTime.milliseconds(now))))
                ORDER BY created_at DESC, kid DESC
                """).all().map(Self.key(from:))
        }
    }

    public func activeKey(realm: String) async throws -> StoredSigningKey? {
        try await StoreErrorMapping.mapping("activeKey") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns) FROM signing_keys WHERE realm = \(bind: realm) AND status = 'active'
                """).first().map(Self.key(from:))
        }
    }

    /// Retires the current active key (if any) and inserts `newKey` as the active one, in one transaction:
    /// readers see either the old key active or the new one, never none or two.
    public func rotate(realm: String, newKey: StoredSigningKey, retiredPublishUntil: Date) async throws {
        var key = newKey
        key.realm = realm
        key.status = .active
        key.publishUntil = nil
        try await StoreErrorMapping.mapping(
            "rotate",
            conflict: "key '\(key.kid)' exists already in realm '\(realm)'",
            missingParent: "realm '\(realm)' does not exist"
        ) { [key] in
            try await database.transaction { session in
                // Serialise rotations of one realm: without this, two concurrent rotations on PostgreSQL both
                // retire the same old key and the second insert hits the one-active-key index. A no-op UPDATE
                // row-locks the realm on both engines (FOR UPDATE is not SQLite syntax; there BEGIN IMMEDIATE
                // already serialises) and tells us whether the realm exists.
                let realmRows = try await session.countingRows("""
                    UPDATE realms SET display_name = display_name WHERE name = \(bind: realm) RETURNING 1 AS locked
                    """)
                guard realmRows > 0 else { throw StoreError.notFound("realm '\(realm)' does not exist") }
                try await session.raw("""
                    UPDATE signing_keys SET status = 'retired', publish_until = \(bind: StorageTime.milliseconds(retiredPublishUntil))
                    WHERE realm = \(bind: realm) AND status = 'active'
                    """).run()
                try await Self.insert(key, into: session)
            }
        }
    }

    public func deleteUnpublishedKeys(now: Date) async throws -> Int {
        try await StoreErrorMapping.mapping("deleteUnpublishedKeys") {
            try await database.sql.countingRows("""
                DELETE FROM signing_keys
                WHERE status = 'retired' AND publish_until <= \(bind: StorageTime.milliseconds(now))
                RETURNING 1 AS deleted
                """)
        }
    }

    private static func insert(_ key: StoredSigningKey, into sql: any SQLDatabase) async throws {
        try await sql.raw("""
            INSERT INTO signing_keys (realm, kid, algorithm, public_jwk, sealed_private_key, status, created_at, publish_until)
            VALUES (\(bind: key.realm), \(bind: key.kid), \(bind: key.algorithm), \(bind: key.publicJWK),
                    \(bind: Data(key.sealedPrivateKey)), \(bind: key.status.rawValue), \(bind: StorageTime.milliseconds(key.createdAt)),
                    \(bind: key.publishUntil.map(StorageTime.milliseconds)))
            """).run()
    }

    private static let columns = "realm, kid, algorithm, public_jwk, sealed_private_key, status, created_at, publish_until"

    private static func key(from row: any SQLRow) throws -> StoredSigningKey {
        let statusText = try row.decode(column: "status", as: String.self)
        guard let status = StoredSigningKey.Status(rawValue: statusText) else {
            throw StoreError.unavailable("signing key has an unknown status '\(statusText)'")
        }
        return StoredSigningKey(
            realm: try row.decode(column: "realm", as: String.self),
            kid: try row.decode(column: "kid", as: String.self),
            algorithm: try row.decode(column: "algorithm", as: String.self),
            publicJWK: try row.decode(column: "public_jwk", as: String.self),
            sealedPrivateKey: [UInt8](try row.decode(column: "sealed_private_key", as: Data.self)),
            status: status,
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            publishUntil: try row.decode(column: "publish_until", as: Int64?.self).map(StorageTime.date(milliseconds:))
        )
    }
}
