/// Every SQL store over one database, built together at startup.
public struct SQLStores: Sendable {
    public let realms: SQLRealmStore
    public let signingKeys: SQLSigningKeyStore
    public let clients: SQLClientStore
    public let users: SQLUserStore
    public let replay: SQLReplayStore

    public init(database: KeywardDatabase) {
        realms = SQLRealmStore(database: database)
        signingKeys = SQLSigningKeyStore(database: database)
        clients = SQLClientStore(database: database)
        users = SQLUserStore(database: database)
        replay = SQLReplayStore(database: database)
    }
}
