// The broker, assembled: hand-offs and their sweep (the relay and the take API come next, issue 29).
import Foundation

/// The broker for native apps (issue 29): built from Core (database, audit, clock).
struct BrokerAssembly: KeywardPart {
    let handoffs: HandoffService
    private let store: any HandoffStore

    init(_ core: CoreServices) {
        store = SQLHandoffStore(database: core.database)
        handoffs = HandoffService(
            store: store, failures: HandoffTakeLimiter(), audit: core.audit, refusals: RefusalAuditSampler(), clock: core.clock, logger: core.logger
        )
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
