// What every part is assembled from: the configuration, the database, the master key, the clock, metrics, the
// audit log, the single-use records and the logger.
import Logging

struct CoreServices: Sendable {
    let configuration: KeywardConfiguration
    let database: KeywardDatabase
    let masterKey: MasterKey
    let clock: any KeywardClock
    let metrics: KeywardMetrics
    let audit: AuditLog
    let singleUse: any SingleUseStore
    let logger: Logger
}
