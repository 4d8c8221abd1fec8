// The broker, assembled: the relay on the authorization pages, delegations and their grant, hand-offs and their API.
import Foundation
import Hummingbird

/// The broker for native apps (issue 29): built from Core (database, audit, clock), the OAuth core (clients, keys,
/// the DPoP gate, the token endpoint's grants), Accounts (users) and OpenID (the authorization pages the relay runs on).
public struct BrokerAssembly: KeywardPart {
    let handoffs: HandoffService
    /// Each realm's broker settings (`keyward broker settings`).
    public let settings: BrokerSettingsStore
    private let store: any HandoffStore
    private let clients: ClientService
    private let takeGate: DPoPResourceGuard
    private let relayClientGate: DPoPResourceGuard
    private let realmResolution: RealmResolution
    private let networks: ClientNetworks
    private let publicURL: String

    init(_ core: CoreServices, oauth: OAuthAssembly, accounts: AccountsAssembly, openID: OpenIDAssembly, relaysPerPersonPerMinute: Int = 30) {
        store = SQLHandoffStore(database: core.database)
        core.deviceKeys.add(removalStep: DeviceHandoffRemoval(store: store))
        core.deviceKeys.add(rotationStep: DeviceHandoffRekey(store: store))
        settings = BrokerSettingsStore(database: core.database, clock: core.clock)
        handoffs = HandoffService(
            store: store, failures: .failedTakes(), puts: .puts(), audit: core.audit, refusals: RefusalAuditSampler(), settings: settings,
            clock: core.clock, logger: core.logger
        )
        var policy = oauth.resourceGuard.policy
        policy.endpoint = .broker
        takeGate = oauth.gate(policy)
        policy.scheme = .dpopOrUnboundBearer
        relayClientGate = oauth.gate(policy)
        (clients, realmResolution, networks, publicURL) = (oauth.clients, oauth.realmResolution, core.settings.clients, core.settings.publicURL)
        let delegations = Delegations(realms: oauth.realms, keys: oauth.keys)
        openID.relays.plug(BrokerRelay(
            clients: oauth.clients, handoffs: handoffs, delegations: delegations, settings: settings, appSessions: openID.refresh,
            relays: HandoffLimiter(limit: relaysPerPersonPerMinute, window: 60), audit: core.audit, clock: core.clock, deviceKeys: core.deviceKeys
        ))
        oauth.grants.add(DelegationGrant(delegations: delegations, users: accounts.users, appSessions: openID.refresh))
    }

    func registerRoutes(on router: Router<KeywardRequestContext>, web: PageSurface) {
        HandoffRoutes(
            service: handoffs, clientRegistry: clients, gate: takeGate, relayClientGate: relayClientGate, realmResolution: realmResolution,
            clients: networks, publicURL: publicURL
        ).register(on: router)
    }
}

extension BrokerAssembly {
    static let migrations = [HandoffSchemaMigration.piece, BrokerSettingsSchemaMigration.piece]

    var sweeps: [ExpiredRowSweep] { [.handoffs(store)] }
}

extension ExpiredRowSweep {
    /// Hand-offs nobody took in time.
    static func handoffs(_ store: any HandoffStore) -> ExpiredRowSweep {
        ExpiredRowSweep("brokerHandoffs") { now in try await store.deleteExpired(now: now) }
    }
}
