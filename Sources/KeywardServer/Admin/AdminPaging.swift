// Paging the admin API's lists: a limit and an opaque cursor in, the items and the next cursor out.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardHTTPInput
import KeywardJOSE

/// Where a page starts and how long it is, from `?limit=` (1–200, default 50) and `?cursor=` (the `next_cursor` of
/// the page before). A cursor is the base64url of the last item's sort key behind a version tag: opaque to clients,
/// and a forged one only starts the list elsewhere in what the caller may read anyway.
struct AdminPage {
    static let defaultLimit = 50
    static let maxLimit = 200
    private static let version = "c1:"

    let limit: Int
    /// The sort key after which the page starts.
    let after: String?

    init(_ request: Request) throws(AdminProblem) {
        let query = request.uri.queryParameters
        if let text = query["limit"].map(String.init) {
            guard let limit = Int(text), (1...Self.maxLimit).contains(limit) else {
                throw .invalid("limit must be an integer from 1 to \(Self.maxLimit)", field: "limit")
            }
            self.limit = limit
        } else {
            limit = Self.defaultLimit
        }
        if let cursor = query["cursor"].map(String.init) {
            guard cursor.utf8.count <= 512, let bytes = try? Base64URL.decode(cursor), let text = String(validating: bytes, as: UTF8.self),
                text.hasPrefix(Self.version), !text.utf8.contains(0)
            else { throw .invalid("cursor is not one this API returned", field: "cursor") }
            after = String(text.dropFirst(Self.version.count))
        } else {
            after = nil
        }
    }

    static func cursor(after key: String) -> String { Base64URL.encode(Array((version + key).utf8)) }

    /// The page of a list read whole (the few clients, providers or apps of a realm), ordered by `key`.
    func response<Item, Value: Encodable>(all: [Item], key: (Item) -> String, render: (Item) -> Value, request: Request) -> Response {
        let ordered = all.sorted { key($0) < key($1) }
        let rest = ordered.drop { item in after.map { key(item) <= $0 } ?? false }
        return response(Array(rest.prefix(limit + 1)), key: key, render: render, request: request)
    }

    /// The answer for `items` fetched with one more than `limit` asked for: the page, and a cursor when there is more.
    func response<Item, Value: Encodable>(_ items: [Item], key: (Item) -> String, render: (Item) -> Value, request: Request) -> Response {
        let page = Array(items.prefix(limit))
        let next = items.count > limit ? page.last.map { Self.cursor(after: key($0)) } : nil
        var headers: HTTPFields = [.cacheControl: "no-store"]
        if let next {
            var query = request.uri.queryParameters.filter { $0.key != "cursor" && $0.key != "limit" }.map { (String($0.key), String($0.value)) }
            query += [("limit", String(limit)), ("cursor", next)]
            headers[HTTPField.Name("Link")!] = "<\(FormBody.appending(query, to: request.uri.path))>; rel=\"next\""
        }
        return AdminJSON.make(AdminList(items: page.map(render), nextCursor: next), headers: headers)
    }
}

/// A page of a list: `{"items": [...], "next_cursor": "..."}`, the cursor absent on the last page.
struct AdminList<Item: Encodable>: Encodable {
    let items: [Item]
    let nextCursor: String?
}

/// The admin API's JSON answers: members in snake_case (`createdAt` is `created_at`), sorted, slashes unescaped.
enum AdminJSON {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }()

    /// A short list answered whole, in the shape of a page without a next one: `{"items": [...]}`.
    static func whole<Item, Value: Encodable>(_ items: [Item], _ render: (Item) -> Value) -> Response {
        make(AdminList(items: items.map(render), nextCursor: nil), headers: [.cacheControl: "no-store"])
    }

    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return JSONResponse.make(bytes: data, status: status, headers: headers)
    }
}

extension KeywardRequestContext {
    /// A path parameter percent-decoded (RFC 3986 §2.1; the router hands segments as sent): a client id may hold a `/`
    /// and arrives as `%2F`. Empty when absent, not valid percent-encoded UTF-8, or holding a NUL (PostgreSQL text
    /// cannot hold one, and no name here does): it names nothing.
    func decodedParameter(_ name: String) -> String {
        guard let decoded = parameters.get(name)?.removingPercentEncoding, !decoded.utf8.contains(0), decoded.utf8.count <= 1024 else { return "" }
        return decoded
    }
}

/// A path segment for a `Location`: the name percent-encoded but for unreserved characters.
func pathSegment(_ name: String) -> String { FormBody.encodeComponent(name) }
