// The passkeys table: registered once per realm, its counter moved only from the value a use read.
import Foundation
import SQLKit

struct SQLPasskeyStore: PasskeyStore {
    let database: KeywardDatabase
    /// Sign-ins' uses, written in groups.
    private let uses: PasskeyUses

    init(database: KeywardDatabase) {
        self.database = database
        uses = PasskeyUses(database: database)
    }

    private static let columns = """
        realm, credential_id, user_id, public_key, algorithm, sign_count, backup_eligible, backed_up, user_verified, transports, aaguid,
        attestation_format, attestation_trusted, name, created_at, last_used_at, possibly_cloned_at
        """

    func insert(_ passkey: Passkey) async throws -> Bool {
        try await StoreErrorMapping.mapping("insertPasskey", missingParent: "realm '\(passkey.realm)' does not exist") {
            try await database.sql.countingRows("""
                INSERT INTO passkeys (\(unsafeRaw: Self.columns))
                VALUES (\(bind: passkey.realm), \(bind: passkey.credentialId), \(bind: passkey.userId), \(bind: passkey.publicKey),
                    \(bind: passkey.algorithm), \(bind: Int64(passkey.signCount)), \(bind: passkey.backupEligible), \(bind: passkey.backedUp),
                    \(bind: passkey.userVerified), \(bind: passkey.transports.joined(separator: ",")), \(bind: passkey.aaguid),
                    \(bind: passkey.attestationFormat), \(bind: passkey.attestationTrusted), \(bind: passkey.name),
                    \(bind: StorageTime.milliseconds(passkey.createdAt)), \(bind: passkey.lastUsedAt.map(StorageTime.milliseconds)),
                    \(bind: passkey.possiblyClonedAt.map(StorageTime.milliseconds)))
                ON CONFLICT (realm, credential_id) DO NOTHING
                RETURNING credential_id
                """) == 1
        }
    }

    func passkey(realm: String, credentialId: String) async throws -> Passkey? {
        try await StoreErrorMapping.mapping("passkey") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns) FROM passkeys WHERE realm = \(bind: realm) AND credential_id = \(bind: credentialId)
                """).first().map(Self.passkey(from:))
        }
    }

    func passkeys(realm: String, userId: String) async throws -> [Passkey] {
        try await StoreErrorMapping.mapping("passkeys") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns) FROM passkeys WHERE realm = \(bind: realm) AND user_id = \(bind: userId)
                ORDER BY created_at, credential_id
                """).all().map(Self.passkey(from:))
        }
    }

    func recordUse(realm: String, credentialId: String, expectedSignCount: UInt32, signCount: UInt32, backedUp: Bool, userVerified: Bool, at: Date) async throws -> Bool {
        try await uses.record(PasskeyUse(
            realm: realm, credentialId: credentialId, expectedSignCount: expectedSignCount, signCount: signCount, backedUp: backedUp,
            userVerified: userVerified, at: at
        ))
    }

    func markPossiblyCloned(realm: String, credentialId: String, at: Date) async throws {
        try await StoreErrorMapping.mapping("markPasskeyPossiblyCloned") {
            try await database.sql.raw("""
                UPDATE passkeys SET possibly_cloned_at = \(bind: StorageTime.milliseconds(at))
                WHERE realm = \(bind: realm) AND credential_id = \(bind: credentialId) AND possibly_cloned_at IS NULL
                """).run()
        }
    }

    func rename(realm: String, userId: String, credentialId: String, name: String) async throws -> Bool {
        try await StoreErrorMapping.mapping("renamePasskey") {
            try await database.sql.countingRows("""
                UPDATE passkeys SET name = \(bind: name)
                WHERE realm = \(bind: realm) AND user_id = \(bind: userId) AND credential_id = \(bind: credentialId)
                RETURNING credential_id
                """) == 1
        }
    }

    func delete(realm: String, userId: String, credentialId: String) async throws -> Bool {
        try await StoreErrorMapping.mapping("deletePasskey") {
            try await database.sql.countingRows("""
                DELETE FROM passkeys WHERE realm = \(bind: realm) AND user_id = \(bind: userId) AND credential_id = \(bind: credentialId)
                RETURNING credential_id
                """) == 1
        }
    }

    func deleteAll(realm: String, userId: String) async throws -> Int {
        try await StoreErrorMapping.mapping("deletePasskeys") {
            try await database.sql.countingRows("""
                DELETE FROM passkeys WHERE realm = \(bind: realm) AND user_id = \(bind: userId) RETURNING credential_id
                """)
        }
    }

    private static func passkey(from row: any SQLRow) throws -> Passkey {
        let transports = try row.decode(column: "transports", as: String.self)
        let signCount = try row.decode(column: "sign_count", as: Int64.self)
        return Passkey(
            realm: try row.decode(column: "realm", as: String.self), credentialId: try row.decode(column: "credential_id", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self), publicKey: try row.decode(column: "public_key", as: String.self),
            algorithm: try row.decode(column: "algorithm", as: Int.self), signCount: UInt32(clamping: signCount),
            backupEligible: try row.decode(column: "backup_eligible", as: Bool.self), backedUp: try row.decode(column: "backed_up", as: Bool.self),
            userVerified: try row.decode(column: "user_verified", as: Bool.self),
            transports: transports.isEmpty ? [] : transports.split(separator: ",").map(String.init),
            aaguid: try row.decode(column: "aaguid", as: String.self), attestationFormat: try row.decode(column: "attestation_format", as: String.self),
            attestationTrusted: try row.decode(column: "attestation_trusted", as: Bool.self), name: try row.decode(column: "name", as: String.self),
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            lastUsedAt: try row.decode(column: "last_used_at", as: Int64?.self).map(StorageTime.date(milliseconds:)),
            possiblyClonedAt: try row.decode(column: "possibly_cloned_at", as: Int64?.self).map(StorageTime.date(milliseconds:))
        )
    }
}
