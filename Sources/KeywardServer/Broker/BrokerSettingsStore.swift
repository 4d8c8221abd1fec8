// The broker_settings table, read through a few seconds' cache.
import Foundation
import KeywardJOSE
import SQLKit

/// Each realm's broker settings, saved by the CLI and read by every relay: kept 5 s per node (`ShortLivedCache`), so a
/// change applies everywhere within that.
public struct BrokerSettingsStore: Sendable {
    let database: KeywardDatabase
    let clock: any KeywardClock
    private let cache = ShortLivedCache<String, BrokerSettings>(lifetime: 5, capacity: 1000)

    init(database: KeywardDatabase, clock: any KeywardClock) {
        (self.database, self.clock) = (database, clock)
    }

    /// The realm's settings, the defaults when none were saved.
    public func settings(realm: String) async throws -> BrokerSettings {
        let now = clock.now()
        if let cached = cache.value(for: realm, now: now) { return cached }
        let stored = try await StoreErrorMapping.mapping("brokerSettings") {
            try await database.sql.raw("SELECT settings FROM broker_settings WHERE realm = \(bind: realm)").first()
                .map { try $0.decode(column: "settings", as: String.self) }
        }
        let settings = stored.flatMap { try? StrictJSON.parseObject(Array($0.utf8)) }.map(BrokerSettings.init(json:)) ?? BrokerSettings()
        cache.store(settings, for: realm, now: now)
        return settings
    }

    public func save(_ settings: BrokerSettings, realm: String) async throws {
        let text = String(decoding: StrictJSON.serialize(settings.jsonObject), as: UTF8.self)
        let now = StorageTime.milliseconds(clock.now())
        try await StoreErrorMapping.mapping("saveBrokerSettings", missingParent: "realm '\(realm)' does not exist") {
            try await database.sql.raw("""
                INSERT INTO broker_settings (realm, settings, updated_at) VALUES (\(bind: realm), \(bind: text), \(bind: now))
                ON CONFLICT (realm) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at
                """).run()
        }
        cache.removeAll()
    }
}
