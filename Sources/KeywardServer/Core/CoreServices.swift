// What every part is assembled from: the settings every part shares, the database, the master key, the clock,
// metrics, the audit log, the single-use records and the logger.
import Foundation
import Logging

struct CoreServices: Sendable {
    /// The settings every part reads; a part's own are a value of its own, handed to its assembly.
    struct Shared: Sendable {
        /// `publicURL`, resolved: issuers and DPoP `htu` derive from it.
        var publicURL: String
        /// `http.maxBodySize`.
        var maxBodySize: Int
        /// `http.trustedProxies`, `http.clientPrefixV4`, `http.clientPrefixV6`.
        var clients: ClientNetworks
        /// `audit.retentionDays`, in seconds.
        var auditRetention: TimeInterval
    }

    let settings: Shared
    let database: KeywardDatabase
    let masterKey: MasterKey
    let clock: any KeywardClock
    let metrics: KeywardMetrics
    let audit: AuditLog
    let singleUse: any SingleUseStore
    let logger: Logger
    /// The registered devices behind keys, once the Devices part plugs them in.
    let deviceKeys = DeviceKeys()
}

extension CoreServices {
    /// Core's shares of the migrations: the single-use records' table and its sweep, and the audit table.
    static let migrations = [SingleUseSchemaMigration.piece, AuditSchemaMigration.piece, SingleUseSweepSchemaMigration.piece]

    /// The core on an open database: metrics, the audit log and the single-use records, whose writes run on the
    /// database's writer.
    static func build(
        settings: Shared, database: KeywardDatabase, masterKey: MasterKey, clock: any KeywardClock, logger: Logger
    ) -> CoreServices {
        let metrics = KeywardMetrics()
        return CoreServices(
            settings: settings, database: database, masterKey: masterKey, clock: clock, metrics: metrics,
            audit: AuditLog(store: SQLAuditStore(database: database), clock: clock, logger: logger, metrics: metrics, writer: database.writerExecutor),
            singleUse: GroupedSingleUseStore(base: SQLSingleUseStore(database: database), writer: database.writerExecutor),
            logger: logger
        )
    }

    /// Core's rows that expire: single-use records, and audit events past `audit.retentionDays`.
    var sweeps: [ExpiredRowSweep] {
        [.singleUse(singleUse), .auditEvents(audit.store, retention: settings.auditRetention)]
    }
}
