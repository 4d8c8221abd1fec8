// The device_apps and devices tables.
import Foundation
import KeywardJOSE
import SQLKit

public struct SQLDeviceStore: DeviceStore {
    let database: KeywardDatabase

    public init(database: KeywardDatabase) {
        self.database = database
    }

    public func createApp(_ app: DeviceApp) async throws {
        try await StoreErrorMapping.mapping(
            "createApp",
            conflict: "app '\(app.appId)' is registered already in realm '\(app.realm)'",
            missingParent: "realm '\(app.realm)' does not exist"
        ) {
            try await database.sql.raw("""
                INSERT INTO device_apps (realm, app_id, platform, team_id, bundle_id, environment, packages, signing_cert_digests,
                    play_integrity_keys, play_integrity_google, missing_attestation, failed_attestation, dev_bypass, created_at)
                VALUES (\(bind: app.realm), \(bind: app.appId), \(bind: app.platform.rawValue), \(bind: app.teamId), \(bind: app.bundleId),
                    \(bind: app.environment.rawValue), \(bind: Self.list(app.packages, whenEmpty: app.platform == .android ? "" : nil)),
                    \(bind: Self.list(app.signingCertDigests, whenEmpty: nil)), \(bind: app.sealedPlayIntegrityKeys.map(Base64URL.encode)), \(bind: app.playIntegrityGoogle),
                    \(bind: app.missingAttestation.rawValue),
                    \(bind: app.failedAttestation.rawValue), \(bind: app.devBypass), \(bind: StorageTime.milliseconds(app.createdAt)))
                """).run()
        }
    }

    public func updateApp(_ app: DeviceApp) async throws -> Bool {
        try await StoreErrorMapping.mapping("updateApp") {
            try await database.sql.countingRows("""
                UPDATE device_apps SET platform = \(bind: app.platform.rawValue), team_id = \(bind: app.teamId), bundle_id = \(bind: app.bundleId),
                    environment = \(bind: app.environment.rawValue), packages = \(bind: Self.list(app.packages, whenEmpty: app.platform == .android ? "" : nil)),
                    signing_cert_digests = \(bind: Self.list(app.signingCertDigests, whenEmpty: nil)),
                    play_integrity_keys = \(bind: app.sealedPlayIntegrityKeys.map(Base64URL.encode)), play_integrity_google = \(bind: app.playIntegrityGoogle),
                    missing_attestation = \(bind: app.missingAttestation.rawValue), failed_attestation = \(bind: app.failedAttestation.rawValue),
                    dev_bypass = \(bind: app.devBypass)
                WHERE realm = \(bind: app.realm) AND app_id = \(bind: app.appId)
                RETURNING 1 AS updated
                """) > 0
        }
    }

    public func app(realm: String, appId: String) async throws -> DeviceApp? {
        try await StoreErrorMapping.mapping("app(realm:appId:)") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.appColumns) FROM device_apps WHERE realm = \(bind: realm) AND app_id = \(bind: appId)
                """).first().map(Self.app(from:))
        }
    }

    public func listApps(realm: String) async throws -> [DeviceApp] {
        try await StoreErrorMapping.mapping("listApps") {
            try await database.sql.raw("SELECT \(unsafeRaw: Self.appColumns) FROM device_apps WHERE realm = \(bind: realm) ORDER BY app_id")
                .all().map(Self.app(from:))
        }
    }

    public func removeApp(realm: String, appId: String) async throws -> Bool {
        try await StoreErrorMapping.mapping("removeApp") {
            try await database.sql.countingRows("""
                DELETE FROM device_apps WHERE realm = \(bind: realm) AND app_id = \(bind: appId) RETURNING 1 AS removed
                """) > 0
        }
    }

    public func createDevice(_ device: Device) async throws {
        try await StoreErrorMapping.mapping(
            "createDevice",
            conflict: "device '\(device.deviceId)' or its key is registered already for app '\(device.appId)'",
            missingParent: "app '\(device.appId)' is not registered in realm '\(device.realm)'"
        ) {
            try await database.sql.raw("""
                INSERT INTO devices (realm, app_id, device_id, public_key, key_thumbprint, platform, status, attestation,
                    attested, app_attest_key_id, app_attest_public_key, assertion_counter, registered_at, key_rotated_at)
                VALUES (\(bind: device.realm), \(bind: device.appId), \(bind: device.deviceId), \(bind: Base64URL.encode(device.publicKey)),
                    \(bind: device.keyThumbprint), \(bind: device.platform.rawValue), \(bind: device.status.rawValue), \(bind: device.attestation),
                    \(bind: device.attested), \(bind: device.appAttestKeyId), \(bind: device.appAttestPublicKey.map(Base64URL.encode)), \(bind: device.assertionCounter),
                    \(bind: StorageTime.milliseconds(device.registeredAt)), \(bind: device.keyRotatedAt.map(StorageTime.milliseconds)))
                """).run()
        }
    }

    public func device(realm: String, appId: String, deviceId: String) async throws -> Device? {
        try await StoreErrorMapping.mapping("device(deviceId:)") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.deviceColumns) FROM devices
                WHERE realm = \(bind: realm) AND app_id = \(bind: appId) AND device_id = \(bind: deviceId)
                """).first().map(Self.device(from:))
        }
    }

    public func device(realm: String, appId: String, keyThumbprint: String) async throws -> Device? {
        try await StoreErrorMapping.mapping("device(keyThumbprint:)") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.deviceColumns) FROM devices
                WHERE realm = \(bind: realm) AND app_id = \(bind: appId) AND key_thumbprint = \(bind: keyThumbprint)
                """).first().map(Self.device(from:))
        }
    }

    public func keyHolders(realm: String, keyThumbprint: String) async throws -> DeviceKeyHolders {
        // The retired branch fills the device's columns it has, in the same order, and NULL for the rest.
        let rows = try await StoreErrorMapping.mapping("keyHolders") {
            try await database.sql.raw("""
                SELECT 0 AS retired, \(unsafeRaw: Self.deviceColumns) FROM devices
                WHERE realm = \(bind: realm) AND key_thumbprint = \(bind: keyThumbprint)
                UNION ALL
                SELECT 1, r.realm, r.app_id, r.device_id, NULL, r.key_thumbprint, d.platform, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                    d.user_id, NULL, NULL
                FROM device_retired_keys r LEFT JOIN devices d ON d.realm = r.realm AND d.app_id = r.app_id AND d.device_id = r.device_id
                WHERE r.realm = \(bind: realm) AND r.key_thumbprint = \(bind: keyThumbprint)
                ORDER BY 1, 3
                """).all()
        }
        var holders = DeviceKeyHolders(devices: [], retiredFrom: nil)
        for row in rows {
            if try row.decode(column: "retired", as: Int.self) == 0 {
                holders.devices.append(try Self.device(from: row))
            } else if holders.retiredFrom == nil {
                holders.retiredFrom = (
                    try row.decode(column: "app_id", as: String.self), try row.decode(column: "device_id", as: String.self),
                    try row.decode(column: "platform", as: String?.self), try row.decode(column: "user_id", as: String?.self)
                )
            }
        }
        return holders
    }

    public func markRemoved(realm: String, appId: String, deviceId: String, userId: String?, at: Date) async throws -> Device? {
        let owner: SQLQueryString = userId.map { "AND user_id = \(bind: $0)" } ?? ""
        // One statement: the row it marked is the row it answers, whatever a concurrent sign-in writes.
        return try await StoreErrorMapping.mapping("markDeviceRemoved") {
            try await database.sql.raw("""
                UPDATE devices SET removed_at = COALESCE(removed_at, \(bind: StorageTime.milliseconds(at)))
                WHERE realm = \(bind: realm) AND app_id = \(bind: appId) AND device_id = \(bind: deviceId) \(owner)
                RETURNING \(unsafeRaw: Self.deviceColumns)
                """).first().map(Self.device(from:))
        }
    }

    public func devices(realm: String, userId: String) async throws -> [Device] {
        try await StoreErrorMapping.mapping("devices(userId:)") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.deviceColumns) FROM devices WHERE realm = \(bind: realm) AND user_id = \(bind: userId)
                ORDER BY last_seen_at DESC, app_id, device_id
                """).all().map(Self.device(from:))
        }
    }

    public func recordSignIn(realm: String, appId: String, deviceId: String, userId: String, at: Date) async throws {
        // Seen within the minute by the same person: nothing to write (a refresh every few seconds costs no commit).
        let at = StorageTime.milliseconds(at)
        try await StoreErrorMapping.mapping("recordDeviceSignIn") {
            try await database.sql.raw("""
                UPDATE devices SET user_id = \(bind: userId), last_seen_at = \(bind: at)
                WHERE realm = \(bind: realm) AND app_id = \(bind: appId) AND device_id = \(bind: deviceId)
                    AND (user_id IS NULL OR user_id <> \(bind: userId) OR last_seen_at IS NULL OR last_seen_at < \(bind: at - 60_000))
                """).run()
        }
    }

    public func listDevices(realm: String, appId: String) async throws -> [Device] {
        try await StoreErrorMapping.mapping("listDevices") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.deviceColumns) FROM devices WHERE realm = \(bind: realm) AND app_id = \(bind: appId)
                ORDER BY registered_at, device_id
                """).all().map(Self.device(from:))
        }
    }

    public func devices(realm: String, appId: String, after: String?, limit: Int) async throws -> [Device] {
        var filter: SQLQueryString = "realm = \(bind: realm) AND app_id = \(bind: appId)"
        if let after { filter = filter + " AND device_id > \(bind: after)" }
        let statement: SQLQueryString = "SELECT \(unsafeRaw: Self.deviceColumns) FROM devices WHERE " + filter + " ORDER BY device_id LIMIT \(bind: limit)"
        return try await StoreErrorMapping.mapping("devices(realm:appId:after:limit:)") {
            try await database.sql.raw(statement).all().map(Self.device(from:))
        }
    }

    public func setStatus(realm: String, appId: String, deviceId: String, to status: Device.Status) async throws -> Bool {
        try await StoreErrorMapping.mapping("setStatus") {
            try await database.sql.countingRows("""
                UPDATE devices SET status = \(bind: status.rawValue)
                WHERE realm = \(bind: realm) AND app_id = \(bind: appId) AND device_id = \(bind: deviceId)
                RETURNING 1 AS updated
                """) > 0
        }
    }

    public func countPendingDevices(realm: String, appId: String, upTo limit: Int) async throws -> Int {
        try await StoreErrorMapping.mapping("countPendingDevices") {
            try await Self.count(database.sql.raw("""
                SELECT COUNT(*) AS counted FROM (
                    SELECT 1 FROM devices WHERE realm = \(bind: realm) AND app_id = \(bind: appId) AND status = 'pending' LIMIT \(bind: limit)
                ) AS pending
                """).first())
        }
    }

    public func countUnattestedDevices(realm: String, appId: String, registeredSince: Date, upTo limit: Int) async throws -> Int {
        try await StoreErrorMapping.mapping("countUnattestedDevices") {
            try await Self.count(database.sql.raw("""
                SELECT COUNT(*) AS counted FROM (
                    SELECT 1 FROM devices WHERE realm = \(bind: realm) AND app_id = \(bind: appId) AND NOT attested
                        AND registered_at >= \(bind: StorageTime.milliseconds(registeredSince)) LIMIT \(bind: limit)
                ) AS unattested
                """).first())
        }
    }

    public func deletePendingDevices(registeredBefore cutoff: Date) async throws -> Int {
        try await StoreErrorMapping.mapping("deletePendingDevices") {
            try await database.sql.countingRows("""
                DELETE FROM devices WHERE status = 'pending' AND registered_at < \(bind: StorageTime.milliseconds(cutoff)) RETURNING 1 AS deleted
                """)
        }
    }

    public func advanceAssertionCounter(realm: String, appId: String, deviceId: String, to counter: Int64) async throws -> Bool {
        try await StoreErrorMapping.mapping("advanceAssertionCounter") {
            try await database.sql.countingRows("""
                UPDATE devices SET assertion_counter = \(bind: counter)
                WHERE realm = \(bind: realm) AND app_id = \(bind: appId) AND device_id = \(bind: deviceId) AND assertion_counter < \(bind: counter)
                RETURNING 1 AS advanced
                """) > 0
        }
    }

    public func replaceKey(
        realm: String, appId: String, deviceId: String, previousThumbprint: String, publicKey: [UInt8], thumbprint: String, attestation: String,
        at: Date
    ) async throws -> Bool {
        try await StoreErrorMapping.mapping("replaceKey", conflict: "the new key is registered already for app '\(appId)'") {
            // One transaction: the old key is remembered as retired exactly when it stops being the device's.
            try await database.transaction { session in
                let replaced = try await session.countingRows("""
                    UPDATE devices SET public_key = \(bind: Base64URL.encode(publicKey)), key_thumbprint = \(bind: thumbprint),
                        attestation = \(bind: attestation), key_rotated_at = \(bind: StorageTime.milliseconds(at))
                    WHERE realm = \(bind: realm) AND app_id = \(bind: appId) AND device_id = \(bind: deviceId)
                        AND key_thumbprint = \(bind: previousThumbprint)
                    RETURNING 1 AS replaced
                    """) > 0
                guard replaced else { return false }
                try await session.raw("""
                    INSERT INTO device_retired_keys (realm, key_thumbprint, app_id, device_id, retired_at)
                    VALUES (\(bind: realm), \(bind: previousThumbprint), \(bind: appId), \(bind: deviceId), \(bind: StorageTime.milliseconds(at)))
                    ON CONFLICT (realm, key_thumbprint) DO NOTHING
                    """).run()
                return true
            }
        }
    }

    // MARK: - Rows

    private static let appColumns = """
        realm, app_id, platform, team_id, bundle_id, environment, packages, signing_cert_digests, play_integrity_keys,
        play_integrity_google, missing_attestation, failed_attestation, dev_bypass, created_at
        """

    private static let deviceColumns = """
        realm, app_id, device_id, public_key, key_thumbprint, platform, status, attestation, attested, app_attest_key_id,
        app_attest_public_key, assertion_counter, registered_at, key_rotated_at, user_id, last_seen_at, removed_at
        """

    /// Comma-separated: package names and hex digests contain no comma (the service checks).
    private static func list(_ values: [String], whenEmpty: String?) -> String? {
        values.isEmpty ? whenEmpty : values.joined(separator: ",")
    }

    private static func split(_ value: String?) -> [String] {
        (value ?? "").split(separator: ",").map(String.init)
    }

    private static func app(from row: any SQLRow) throws -> DeviceApp {
        DeviceApp(
            realm: try row.decode(column: "realm", as: String.self),
            appId: try row.decode(column: "app_id", as: String.self),
            platform: try enumValue(row, "platform"),
            environment: try enumValue(row, "environment"),
            teamId: try row.decode(column: "team_id", as: String?.self),
            bundleId: try row.decode(column: "bundle_id", as: String?.self),
            packages: split(try row.decode(column: "packages", as: String?.self)),
            signingCertDigests: split(try row.decode(column: "signing_cert_digests", as: String?.self)),
            missingAttestation: try enumValue(row, "missing_attestation"),
            failedAttestation: try enumValue(row, "failed_attestation"),
            devBypass: try row.decode(column: "dev_bypass", as: Bool.self),
            sealedPlayIntegrityKeys: try row.decode(column: "play_integrity_keys", as: String?.self).map { try decodeBytes($0, "play_integrity_keys") },
            playIntegrityGoogle: try row.decode(column: "play_integrity_google", as: Bool.self),
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self))
        )
    }

    private static func device(from row: any SQLRow) throws -> Device {
        Device(
            realm: try row.decode(column: "realm", as: String.self),
            appId: try row.decode(column: "app_id", as: String.self),
            deviceId: try row.decode(column: "device_id", as: String.self),
            publicKey: try bytes(row, "public_key"),
            keyThumbprint: try row.decode(column: "key_thumbprint", as: String.self),
            platform: try enumValue(row, "platform"),
            status: try enumValue(row, "status"),
            attestation: try row.decode(column: "attestation", as: String.self),
            attested: try row.decode(column: "attested", as: Bool.self),
            appAttestKeyId: try row.decode(column: "app_attest_key_id", as: String?.self),
            appAttestPublicKey: try row.decode(column: "app_attest_public_key", as: String?.self).map { try decodeBytes($0, "app_attest_public_key") },
            assertionCounter: try row.decode(column: "assertion_counter", as: Int64?.self),
            registeredAt: StorageTime.date(milliseconds: try row.decode(column: "registered_at", as: Int64.self)),
            keyRotatedAt: try row.decode(column: "key_rotated_at", as: Int64?.self).map { StorageTime.date(milliseconds: $0) },
            userId: try row.decode(column: "user_id", as: String?.self),
            lastSeenAt: try row.decode(column: "last_seen_at", as: Int64?.self).map { StorageTime.date(milliseconds: $0) },
            removedAt: try row.decode(column: "removed_at", as: Int64?.self).map { StorageTime.date(milliseconds: $0) }
        )
    }

    private static func count(_ row: (any SQLRow)?) throws -> Int {
        try row?.decode(column: "counted", as: Int.self) ?? 0
    }

    private static func enumValue<Value: RawRepresentable<String>>(_ row: any SQLRow, _ column: String) throws -> Value {
        let raw = try row.decode(column: column, as: String.self)
        guard let value = Value(rawValue: raw) else { throw StoreError.unavailable("unexpected \(column) '\(raw)' in the database") }
        return value
    }

    private static func bytes(_ row: any SQLRow, _ column: String) throws -> [UInt8] {
        try decodeBytes(try row.decode(column: column, as: String.self), column)
    }

    private static func decodeBytes(_ text: String, _ column: String) throws -> [UInt8] {
        guard let bytes = try? Base64URL.decode(text) else { throw StoreError.unavailable("unreadable \(column) in the database") }
        return bytes
    }
}
