// The audit_events table: grouped inserts, reads newest first, deletion past the retention.
import Foundation
import SQLKit

public struct SQLAuditStore: AuditStore {
    let database: KeywardDatabase

    public init(database: KeywardDatabase) {
        self.database = database
    }

    public func append(_ events: [AuditEvent]) async throws {
        guard !events.isEmpty else { return }
        let rows = SQLList(events.map { event -> any SQLExpression in
            SQLQueryString("""
                (\(bind: event.id), \(bind: event.realm), \(bind: event.type.rawValue), \(bind: event.userId), \(bind: event.clientId), \
                \(bind: event.detailsJSON), \(bind: StorageTime.milliseconds(event.createdAt)))
                """)
        })
        try await StoreErrorMapping.mapping("append audit events") {
            try await database.sql.raw("""
                INSERT INTO audit_events (id, realm, event_type, user_id, client_id, details, created_at) VALUES \(rows)
                """).run()
        }
    }

    public func deleteEvents(before cutoff: Date) async throws -> Int {
        try await StoreErrorMapping.mapping("delete old audit events") {
            try await database.sql.countingRows("""
                DELETE FROM audit_events WHERE created_at < \(bind: StorageTime.milliseconds(cutoff)) RETURNING 1 AS deleted
                """)
        }
    }

    public func events(realm: String, query: AuditQuery) async throws -> [AuditEvent] {
        var filter: SQLQueryString = "realm = \(bind: realm)"
        if let userId = query.userId { filter = filter + " AND user_id = \(bind: userId)" }
        if let type = query.type { filter = filter + " AND event_type = \(bind: type.rawValue)" }
        if let since = query.since { filter = filter + " AND created_at >= \(bind: StorageTime.milliseconds(since))" }
        if let until = query.until { filter = filter + " AND created_at < \(bind: StorageTime.milliseconds(until))" }
        if let before = query.before {
            let time = StorageTime.milliseconds(before.createdAt)
            filter = filter + " AND (created_at < \(bind: time) OR (created_at = \(bind: time) AND id < \(bind: before.id)))"
        }
        let statement: SQLQueryString = """
            SELECT id, realm, event_type, user_id, client_id, details, created_at FROM audit_events WHERE \(filter) \
            ORDER BY created_at DESC, id DESC LIMIT \(bind: query.limit)
            """
        return try await StoreErrorMapping.mapping("audit events") {
            try await database.sql.raw(statement).all().map { row in
                AuditEvent(
                    id: try row.decode(column: "id", as: String.self),
                    realm: try row.decode(column: "realm", as: String.self),
                    type: AuditEvent.EventType(rawValue: try row.decode(column: "event_type", as: String.self)) ?? .unknown,
                    userId: try row.decode(column: "user_id", as: String?.self),
                    clientId: try row.decode(column: "client_id", as: String?.self),
                    detailsJSON: try row.decode(column: "details", as: String.self),
                    createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self))
                )
            }
        }
    }
}
