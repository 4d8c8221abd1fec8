// A part's settings per realm, one JSON object a realm in a table the part owns, read through a few seconds' cache.
import Foundation
import KeywardJOSE
import SQLKit

/// Settings a part keeps per realm as one JSON object (`BrokerSettings`, `PasskeySettings`). Reading a stored
/// object never fails: unknown keys are ignored (a newer node's settings do not stop an older one) and a value out
/// of its range falls back to its default.
public protocol RealmSettingsValue: Sendable, Equatable {
    /// The defaults, for a realm that saved none.
    init()
    init(json: JSONObject)
    var jsonObject: JSONObject { get }
}

/// The table of one part's `RealmSettingsValue`s: `(realm PRIMARY KEY REFERENCES realms, settings TEXT, updated_at)`,
/// created by the part's migration. Saved by the CLI, read by every node: kept 5 s per node (`ShortLivedCache`), so
/// a change applies everywhere within that.
public struct RealmSettingsTable<Value: RealmSettingsValue>: Sendable {
    let database: KeywardDatabase
    let clock: any KeywardClock
    let table: String
    private let cache = ShortLivedCache<String, Value>(lifetime: 5, capacity: 1000)

    init(database: KeywardDatabase, clock: any KeywardClock, table: String) {
        (self.database, self.clock, self.table) = (database, clock, table)
    }

    /// The realm's settings, the defaults when none were saved.
    public func settings(realm: String) async throws -> Value {
        let now = clock.now()
        if let cached = cache.value(for: realm, now: now) { return cached }
        let stored = try await StoreErrorMapping.mapping(table) {
            try await database.sql.raw("SELECT settings FROM \(ident: table) WHERE realm = \(bind: realm)").first()
                .map { try $0.decode(column: "settings", as: String.self) }
        }
        let settings = stored.flatMap { try? StrictJSON.parseObject(Array($0.utf8)) }.map(Value.init(json:)) ?? Value()
        cache.store(settings, for: realm, now: now)
        return settings
    }

    public func save(_ settings: Value, realm: String) async throws {
        let text = String(decoding: StrictJSON.serialize(settings.jsonObject), as: UTF8.self)
        let now = StorageTime.milliseconds(clock.now())
        try await StoreErrorMapping.mapping("save \(table)", missingParent: "realm '\(realm)' does not exist") {
            try await database.sql.raw("""
                INSERT INTO \(ident: table) (realm, settings, updated_at) VALUES (\(bind: realm), \(bind: text), \(bind: now))
                ON CONFLICT (realm) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at
                """).run()
        }
        cache.removeAll()
    }
}
