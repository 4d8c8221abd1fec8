// ETag and If-Match for the admin API's resources: a resource's revision as its entity tag.
import HTTPTypes
import Hummingbird
import KeywardHTTPInput

/// A resource's revision is its strong entity tag (`"7"`). An update or delete with `If-Match` is applied only while
/// the resource is still at a revision the header names, in the same statement as the write: a lost update is
/// refused with 412. Without the header the write is unconditional; `If-Match: *` only asks that the resource exist.
enum AdminRevision {
    static func etag(_ revision: Int64) -> String { "\"\(revision)\"" }

    /// The route patterns whose writes compare `If-Match` with a revision; every other write refuses a tag.
    static let routesWithRevisions: Set<String> = ["/admin/realms/{realm}/users/{id}"]

    static func headers(_ revision: Int64) -> HTTPFields { [.eTag: etag(revision), .cacheControl: "no-store"] }

    /// The revision the write must find, from `If-Match`: nil for none (or `*`). `current` reads the resource's
    /// revision, asked only when the header names several tags.
    static func expected(_ request: Request, current: () async throws -> Int64?) async throws -> Int64? {
        guard case .tags(let tags) = try condition(request) else { return nil }
        // Compared as the tag is written, byte for byte (RFC 9110 §8.8.3.2): "03" is not "3".
        let revisions = Set(tags.filter { !$0.weak }.compactMap { tag in Int64(tag.opaque).flatMap { String($0) == tag.opaque ? $0 : nil } })
        if revisions.count == 1, let only = revisions.first { return only }
        guard let now = try await current(), revisions.contains(now) else { throw stale }
        return now
    }

    /// For a write to a resource without revisions: `If-Match` naming a tag cannot hold (no current representation has
    /// one, RFC 9110 §13.1.1), so the write is refused rather than made unconditionally; `*` asks only that it exist.
    static func refuseTags(_ request: Request) throws(AdminProblem) {
        if case .tags = try condition(request) {
            throw .stale("this resource has no ETag to compare: send the change without If-Match (or with If-Match: *)")
        }
    }

    /// The request's `If-Match`, a malformed one answered as a bad request naming the header.
    private static func condition(_ request: Request) throws(AdminProblem) -> IfMatch? {
        do throws(IfMatchError) {
            return try IfMatch.parse(request.headers[values: .ifMatch])
        } catch {
            throw .invalid(error.description, field: "If-Match")
        }
    }

    static let stale = AdminProblem.stale("the resource changed since it was read (If-Match does not name its current ETag); read it again")
}
