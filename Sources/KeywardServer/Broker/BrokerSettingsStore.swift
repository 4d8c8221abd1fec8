// The broker_settings table (migration 18): each realm's `BrokerSettings`.

/// Each realm's broker settings, saved by `keyward broker settings` and read by every relay.
public typealias BrokerSettingsStore = RealmSettingsTable<BrokerSettings>

extension RealmSettingsTable where Value == BrokerSettings {
    init(database: KeywardDatabase, clock: any KeywardClock) {
        self.init(database: database, clock: clock, table: "broker_settings")
    }
}
