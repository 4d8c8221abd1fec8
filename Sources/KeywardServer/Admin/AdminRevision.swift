// ETag and If-Match for the admin API's resources: a resource's revision as its entity tag.
import HTTPTypes
import Hummingbird
import KeywardHTTPInput

/// A resource's revision is its strong entity tag (`"7"`). An update or delete with `If-Match` is applied only while
/// the resource is still at a revision the header names, in the same statement as the write: a lost update is
/// refused with 412. Without the header the write is unconditional; `If-Match: *` only asks that the resource exist.
enum AdminRevision {
    static func etag(_ revision: Int64) -> String { "\"\(revision)\"" }

    static func headers(_ revision: Int64) -> HTTPFields { [.eTag: etag(revision), .cacheControl: "no-store"] }

    /// The revision the write must find, from `If-Match`: nil for none (or `*`). `current` reads the resource's
    /// revision, asked only when the header names several tags.
    static func expected(_ request: Request, current: () async throws -> Int64?) async throws -> Int64? {
        let condition: IfMatch?
        do throws(IfMatchError) {
            condition = try IfMatch.parse(request.headers[values: .ifMatch])
        } catch {
            throw AdminProblem.invalid(error.description, field: "If-Match")
        }
        guard case .tags(let tags) = condition else { return nil }
        let revisions = Set(tags.filter { !$0.weak }.compactMap { Int64($0.opaque) })
        if revisions.count == 1, let only = revisions.first { return only }
        guard let now = try await current(), revisions.contains(now) else { throw stale }
        return now
    }

    static let stale = AdminProblem.stale("the resource changed since it was read (If-Match does not name its current ETag); read it again")
}
