// The broker, assembled: hand-offs, their API and their sweep.
import Foundation
import Hummingbird

/// The broker for native apps (issue 29): built from Core (database, audit, clock) and the OAuth core (clients, the
/// DPoP gate, the realm resolver).
struct BrokerAssembly: KeywardPart {
    let handoffs: HandoffService
    private let store: any HandoffStore
    private let clients: ClientService
    private let takeGate: DPoPResourceGuard
    private let relayClientGate: DPoPResourceGuard
    private let realmResolution: RealmResolution
    private let networks: ClientNetworks
    private let publicURL: String

    init(_ core: CoreServices, oauth: OAuthAssembly) {
        store = SQLHandoffStore(database: core.database)
        handoffs = HandoffService(
            store: store, failures: .failedTakes(), puts: .puts(), audit: core.audit, refusals: RefusalAuditSampler(), clock: core.clock,
            logger: core.logger
        )
        var policy = oauth.resourceGuard.policy
        policy.endpoint = .broker
        takeGate = oauth.gate(policy)
        policy.scheme = .dpopOrUnboundBearer
        relayClientGate = oauth.gate(policy)
        (clients, realmResolution, networks, publicURL) = (oauth.clients, oauth.realmResolution, core.settings.clients, core.settings.publicURL)
    }

    func registerRoutes(on router: Router<KeywardRequestContext>, web: PageSurface) {
        HandoffRoutes(
            service: handoffs, clientRegistry: clients, gate: takeGate, relayClientGate: relayClientGate, realmResolution: realmResolution,
            clients: networks, publicURL: publicURL
        ).register(on: router)
    }
}

extension BrokerAssembly {
    static let migrations = [HandoffSchemaMigration.piece]

    var sweeps: [ExpiredRowSweep] { [.handoffs(store)] }
}

extension ExpiredRowSweep {
    /// Hand-offs nobody took in time.
    static func handoffs(_ store: any HandoffStore) -> ExpiredRowSweep {
        ExpiredRowSweep("brokerHandoffs") { now in try await store.deleteExpired(now: now) }
    }
}
