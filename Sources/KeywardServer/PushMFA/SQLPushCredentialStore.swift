// The push_credentials table: enrolled devices and their keys (users are read through Accounts' UserService).
import Foundation
import SQLKit

public struct SQLPushCredentialStore: PushCredentialStore {
    let database: KeywardDatabase

    public init(database: KeywardDatabase) {
        self.database = database
    }

    public func completeEnrollment(challengeId: String, credential: PushCredential, now: Date) async throws -> ChallengeResolution {
        try await StoreErrorMapping.mapping("completeEnrollment", missingParent: "realm '\(credential.realm)' does not exist") {
            let resolved = try await database.transaction { session -> PushChallenge? in
                guard let challenge = try await SQLPushChallengeStore.resolvePending(
                    session, id: challengeId, to: .approved, now: now
                ) else { return nil }
                // The original adds a second credential for a repeated deviceId and later picks "the first";
                // Keyward keeps one record per device so the key that authenticates is never ambiguous.
                try await session.raw("""
                    DELETE FROM push_credentials
                    WHERE realm = \(bind: credential.realm) AND user_id = \(bind: credential.userId) AND device_id = \(bind: credential.deviceId)
                    """).run()
                try await session.raw("""
                    INSERT INTO push_credentials (id, realm, user_id, credential_id, device_id, device_type, device_label,
                        public_key_jwk, push_provider_id, push_provider_type, push_token_valid, created_at, last_used_at)
                    VALUES (\(bind: credential.id), \(bind: credential.realm), \(bind: credential.userId), \(bind: credential.credentialId),
                        \(bind: credential.deviceId), \(bind: credential.deviceType), \(bind: credential.deviceLabel),
                        \(bind: credential.publicKeyJWK), \(bind: credential.pushProviderId), \(bind: credential.pushProviderType),
                        \(bind: credential.pushTokenValid), \(bind: StorageTime.milliseconds(credential.createdAt)), NULL)
                    """).run()
                return challenge
            }
            if let resolved { return .applied(resolved) }
            let current = try await SQLPushChallengeStore(database: database).challenge(id: challengeId, now: now)
            return current.map(ChallengeResolution.alreadyFinal) ?? .notFound
        }
    }

    public func putRegisteredDeviceCredential(_ credential: PushCredential, maxDevices: Int) async throws -> Bool {
        try await StoreErrorMapping.mapping(
            "putRegisteredDeviceCredential", conflict: "the device's credential changed meanwhile", missingParent: "realm '\(credential.realm)' does not exist"
        ) {
            try await database.transaction { session in
                let others = try await session.raw("""
                    SELECT COUNT(*) AS counted FROM push_credentials
                    WHERE realm = \(bind: credential.realm) AND user_id = \(bind: credential.userId) AND device_id <> \(bind: credential.deviceId)
                    """).first(decodingColumn: "counted", as: Int.self) ?? 0
                guard others < maxDevices else { return false }
                // One record per device, as an enrollment by QR code keeps: the key that authenticates is never ambiguous.
                try await session.raw("""
                    DELETE FROM push_credentials
                    WHERE realm = \(bind: credential.realm) AND user_id = \(bind: credential.userId) AND device_id = \(bind: credential.deviceId)
                    """).run()
                try await session.raw("""
                    INSERT INTO push_credentials (id, realm, user_id, credential_id, device_id, device_type, device_label,
                        public_key_jwk, push_provider_id, push_provider_type, push_token_valid, created_at, last_used_at,
                        registered_app_id, registered_device_id)
                    VALUES (\(bind: credential.id), \(bind: credential.realm), \(bind: credential.userId), \(bind: credential.credentialId),
                        \(bind: credential.deviceId), \(bind: credential.deviceType), \(bind: credential.deviceLabel),
                        \(bind: credential.publicKeyJWK), \(bind: credential.pushProviderId), \(bind: credential.pushProviderType),
                        \(bind: credential.pushTokenValid), \(bind: StorageTime.milliseconds(credential.createdAt)), NULL,
                        \(bind: credential.registeredAppId), \(bind: credential.registeredDeviceId))
                    """).run()
                return true
            }
        }
    }

    public func deleteRegisteredDeviceCredentials(realm: String, appId: String, deviceId: String) async throws -> [PushCredential] {
        try await StoreErrorMapping.mapping("deleteRegisteredDeviceCredentials") {
            try await database.sql.raw("""
                DELETE FROM push_credentials
                WHERE realm = \(bind: realm) AND registered_app_id = \(bind: appId) AND registered_device_id = \(bind: deviceId)
                RETURNING \(unsafeRaw: Self.columns)
                """).all().map(Self.credential(from:))
        }
    }

    public func rekeyRegisteredDeviceCredentials(realm: String, appId: String, deviceId: String, publicKeyJWK: String) async throws {
        try await StoreErrorMapping.mapping("rekeyRegisteredDeviceCredentials") {
            try await database.sql.raw("""
                UPDATE push_credentials SET public_key_jwk = \(bind: publicKeyJWK)
                WHERE realm = \(bind: realm) AND registered_app_id = \(bind: appId) AND registered_device_id = \(bind: deviceId)
                """).run()
        }
    }

    public func credentials(realm: String, userId: String) async throws -> [PushCredential] {
        try await StoreErrorMapping.mapping("credentials(realm:userId:)") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns) FROM push_credentials
                WHERE realm = \(bind: realm) AND user_id = \(bind: userId) ORDER BY created_at, id
                """).all().map(Self.credential(from:))
        }
    }

    public func settingsAndCredentials(realm: String, userId: String) async throws -> (settings: PushMFASettings?, credentials: [PushCredential]) {
        try await StoreErrorMapping.mapping("settingsAndCredentials") {
            // The one-row anchor keeps a row (with NULL columns) when the realm has no settings or the user no device.
            let rows = try await database.sql.raw("""
                SELECT s.settings AS realm_settings, \(unsafeRaw: Self.joinedColumns)
                FROM (SELECT 1 AS anchor) AS one
                LEFT JOIN push_mfa_settings s ON s.realm = \(bind: realm)
                LEFT JOIN push_credentials c ON c.realm = \(bind: realm) AND c.user_id = \(bind: userId)
                ORDER BY c.created_at, c.id
                """).all()
            let settings = try rows.first?.decode(column: "realm_settings", as: String?.self).map {
                try SQLPushMFAStateStore.settings(fromJSON: $0, realm: realm)
            }
            return (settings, try rows.filter { try !$0.decodeNil(column: "id") }.map(Self.credential(from:)))
        }
    }

    public func credential(realm: String, userId: String, deviceId: String) async throws -> PushCredential? {
        try await StoreErrorMapping.mapping("credential(realm:userId:deviceId:)") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns) FROM push_credentials
                WHERE realm = \(bind: realm) AND user_id = \(bind: userId) AND device_id = \(bind: deviceId)
                """).first().map(Self.credential(from:))
        }
    }

    public func credential(realm: String, id: String) async throws -> PushCredential? {
        try await StoreErrorMapping.mapping("credential(realm:id:)") {
            try await database.sql.raw("SELECT \(unsafeRaw: Self.columns) FROM push_credentials WHERE realm = \(bind: realm) AND id = \(bind: id)")
                .first().map(Self.credential(from:))
        }
    }

    public func updatePushProvider(realm: String, id: String, providerId: String, providerType: String) async throws {
        try await updateOne("updatePushProvider", """
            UPDATE push_credentials SET push_provider_id = \(bind: providerId), push_provider_type = \(bind: providerType),
                push_token_valid = \(bind: true)
            WHERE realm = \(bind: realm) AND id = \(bind: id) RETURNING 1 AS updated
            """)
    }

    public func markPushTokenInvalid(realm: String, id: String) async throws {
        try await updateOne("markPushTokenInvalid", """
            UPDATE push_credentials SET push_token_valid = \(bind: false) WHERE realm = \(bind: realm) AND id = \(bind: id) RETURNING 1 AS updated
            """)
    }

    public func replaceKey(realm: String, id: String, publicKeyJWK: String, createdAt: Date) async throws {
        try await updateOne("replaceKey", """
            UPDATE push_credentials SET public_key_jwk = \(bind: publicKeyJWK), created_at = \(bind: StorageTime.milliseconds(createdAt))
            WHERE realm = \(bind: realm) AND id = \(bind: id) RETURNING 1 AS updated
            """)
    }

    public func touch(realm: String, id: String, at: Date) async throws {
        try await StoreErrorMapping.mapping("touch") {
            try await database.sql.raw("""
                UPDATE push_credentials SET last_used_at = \(bind: StorageTime.milliseconds(at)) WHERE realm = \(bind: realm) AND id = \(bind: id)
                """).run()
        }
    }

    public func deleteCredential(realm: String, userId: String, id: String) async throws {
        try await updateOne("deleteCredential", """
            DELETE FROM push_credentials WHERE realm = \(bind: realm) AND user_id = \(bind: userId) AND id = \(bind: id) RETURNING 1 AS deleted
            """)
    }

    private func updateOne(_ operation: String, _ query: SQLQueryString) async throws {
        let count = try await StoreErrorMapping.mapping(operation) { try await database.sql.countingRows(query) }
        guard count > 0 else { throw StoreError.notFound("push credential not found") }
    }

    private static let columns = """
        id, realm, user_id, credential_id, device_id, device_type, device_label, public_key_jwk, push_provider_id,
        push_provider_type, push_token_valid, created_at, last_used_at, registered_app_id, registered_device_id
        """

    /// `columns` read from the alias `c`, for joins.
    private static let joinedColumns = columns.split(separator: ",").map { "c." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        .joined(separator: ", ")

    private static func credential(from row: any SQLRow) throws -> PushCredential {
        PushCredential(
            id: try row.decode(column: "id", as: String.self),
            realm: try row.decode(column: "realm", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            credentialId: try row.decode(column: "credential_id", as: String.self),
            deviceId: try row.decode(column: "device_id", as: String.self),
            deviceType: try row.decode(column: "device_type", as: String.self),
            deviceLabel: try row.decode(column: "device_label", as: String.self),
            publicKeyJWK: try row.decode(column: "public_key_jwk", as: String.self),
            pushProviderId: try row.decode(column: "push_provider_id", as: String.self),
            pushProviderType: try row.decode(column: "push_provider_type", as: String.self),
            pushTokenValid: try row.decode(column: "push_token_valid", as: Bool.self),
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            lastUsedAt: try row.decode(column: "last_used_at", as: Int64?.self).map(StorageTime.date(milliseconds:)),
            registeredAppId: try row.decode(column: "registered_app_id", as: String?.self),
            registeredDeviceId: try row.decode(column: "registered_device_id", as: String?.self)
        )
    }
}
