// The admin API's audit events: a realm's security events, newest first, filtered by type, user and time.
import Foundation
import Hummingbird
import KeywardJOSE

/// `GET /admin/realms/{realm}/audit-events` (`audit:read`).
struct AdminAuditRoutes {
    let audit: AuditLog

    func register(on realm: RouterGroup<KeywardRequestContext>) {
        realm.get("audit-events") { request, context in
            try context.admin.require(.auditRead)
            let page = try AdminPage(request)
            var query = try Self.query(request)
            query.limit = page.limit + 1
            if let after = page.after {
                let parts = after.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, let milliseconds = Int64(parts[0]), Self.storable.contains(milliseconds) else {
                    throw AdminProblem.invalid("cursor is not one this API returned", field: "cursor")
                }
                query.before = (Date(timeIntervalSince1970: Double(milliseconds) / 1000), String(parts[1]))
            }
            let events = try await audit.events(realm: try context.realm.name, query: query)
            return page.response(events, key: { "\(Int64(($0.createdAt.timeIntervalSince1970 * 1000).rounded())):\($0.id)" }, render: AdminAuditEventBody.init, request: request)
        }
    }

    private static func query(_ request: Request) throws(AdminProblem) -> AuditQuery {
        let parameters = request.uri.queryParameters
        var query = AuditQuery()
        if let type = parameters["type"].map(String.init) {
            guard let known = AuditEvent.EventType(rawValue: type), known != .unknown else {
                throw .invalid("type '\(type.prefix(64))' is not an audit event type (e.g. UserDisabled, AdminChange)", field: "type")
            }
            query.type = known
        }
        if let userId = parameters["user_id"].map(String.init) {
            guard (1...128).contains(userId.utf8.count), !userId.utf8.contains(0) else { throw .invalid("user_id must be 1-128 bytes", field: "user_id") }
            query.userId = userId
        }
        query.since = try time(parameters["since"].map(String.init), field: "since")
        query.until = try time(parameters["until"].map(String.init), field: "until")
        return query
    }

    /// The instants a time here may name, in milliseconds since 1970: up to the end of year 9999. A cursor or a time is
    /// the client's to send, and one beyond any date must be refused before it is converted back to milliseconds,
    /// where it would trap (security review of issue 33).
    static let storable: ClosedRange<Int64> = 0...253_402_300_799_999

    private static func time(_ text: String?, field: String) throws(AdminProblem) -> Date? {
        guard let text else { return nil }
        guard text.utf8.count <= 64, let date = try? Date(text, strategy: .iso8601), date.timeIntervalSince1970 >= 0,
            date.timeIntervalSince1970 * 1000 <= Double(storable.upperBound)
        else {
            throw .invalid("\(field) must be an RFC 3339 time such as 2026-11-28T12:00:00Z", field: field)
        }
        return date
    }
}

struct AdminAuditEventBody: Encodable {
    let id: String
    let type: String
    let userId: String?
    let clientId: String?
    let details: [String: String]
    let createdAt: String

    init(_ event: AuditEvent) {
        (id, type, userId, clientId) = (event.id, event.type.rawValue, event.userId, event.clientId)
        let object = (try? StrictJSON.parseObject(Array(event.detailsJSON.utf8))) ?? [:]
        details = object.compactMapValues(\.stringValue)
        createdAt = event.createdAt.formatted(.iso8601)
    }
}
