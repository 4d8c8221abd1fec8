// /Users (RFC 7644 §3.2–3.6): thin — read the request, call SCIMUserService, answer application/scim+json.
import Foundation
import Hummingbird
import KeywardJOSE
import KeywardHTTPInput
import KeywardWire

struct SCIMUserRoutes {
    let service: SCIMUserService
    let maxBodySize: Int

    static let listSchema = "urn:ietf:params:scim:api:messages:2.0:ListResponse"

    func register(on realm: RouterGroup<KeywardRequestContext>) {
        realm.get("Users") { request, context in
            try await list(try SCIMSearch(query: request), realm: try context.realm.name)
        }
        realm.post("Users") { request, context in
            let projection = try Self.projection(request)
            let body = try await SCIMRequestBody.read(request, maxSize: maxBodySize)
            let (user, resource) = try await service.create(realm: try context.realm.name, body: body)
            return Self.answer(projection.apply(resource), user: user, status: .created, location: resource)
        }
        realm.get("Users/:id") { request, context in
            let (user, resource) = try await service.user(realm: try context.realm.name, id: context.decodedParameter("id"))
            return Self.answer(try Self.projection(request).apply(resource), user: user)
        }
        realm.put("Users/:id") { request, context in
            let projection = try Self.projection(request)
            let body = try await SCIMRequestBody.read(request, maxSize: maxBodySize)
            let (user, resource) = try await service.replace(
                realm: try context.realm.name, id: context.decodedParameter("id"), body: body, ifMatch: request.headers.values(.ifMatch)
            )
            return Self.answer(projection.apply(resource), user: user)
        }
        realm.patch("Users/:id") { request, context in
            let projection = try Self.projection(request)
            let body = try await SCIMRequestBody.read(request, maxSize: maxBodySize)
            let (user, resource) = try await service.patch(
                realm: try context.realm.name, id: context.decodedParameter("id"), body: body, ifMatch: request.headers.values(.ifMatch)
            )
            return Self.answer(projection.apply(resource), user: user)
        }
        realm.delete("Users/:id") { request, context in
            try await service.delete(realm: try context.realm.name, id: context.decodedParameter("id"), ifMatch: request.headers.values(.ifMatch))
            return Response(status: .noContent, headers: [.cacheControl: "no-store"])
        }
    }

    private func list(_ search: SCIMSearch, realm: String) async throws -> Response {
        let listing = try await service.list(realm: realm, filter: search.filter, startIndex: search.firstIndex, count: search.pageSize)
        return Self.listResponse(total: listing.total, startIndex: search.firstIndex, resources: listing.resources, projection: search.projection)
    }

    /// A ListResponse (RFC 7644 §3.4.2) of `resources`, each as `projection` asks.
    static func listResponse(total: Int, startIndex: Int, resources: [JSONObject], projection: SCIMProjection) -> Response {
        answer([
            "schemas": .array([.string(listSchema)]), "totalResults": .number(Double(total)), "startIndex": .number(Double(startIndex)),
            "itemsPerPage": .number(Double(resources.count)), "Resources": .array(resources.map { .object(projection.apply($0)) }),
        ])
    }

    static func projection(_ request: Request) throws(SCIMError) -> SCIMProjection {
        try projection(query(request))
    }

    static func projection(_ query: [String: String]) throws(SCIMError) -> SCIMProjection {
        try SCIMProjection(query: query["attributes"], excluded: query["excludedAttributes"])
    }

    /// The query as a form (`+` is a space, as the HTTP libraries directories use write it); a parameter twice is refused.
    static func query(_ request: Request) throws(SCIMError) -> [String: String] {
        do throws(FormBody.Failure) {
            return try FormBody.parse(Array((request.uri.query ?? "").utf8))
        } catch .duplicate(let name) {
            throw SCIMError(.badRequest, .invalidValue, "the query gives '\(name.prefix(64))' twice")
        } catch {
            throw SCIMError(.badRequest, .invalidValue, "the query is not percent-encoded form data, or holds a NUL")
        }
    }

    /// `location`: the resource as stored, whose `meta.location` becomes the `Location` header.
    static func answer(_ body: JSONObject, user: User? = nil, status: HTTPResponse.Status = .ok, location resource: JSONObject? = nil) -> Response {
        answer(body, version: user?.revision, status: status, location: resource)
    }

    /// `version`: the resource's revision, answered as its `ETag`.
    static func answer(_ body: JSONObject, version: Int64?, status: HTTPResponse.Status = .ok, location resource: JSONObject? = nil) -> Response {
        var headers: HTTPFields = [.cacheControl: "no-store"]
        if let version { headers[.eTag] = SCIMVersion.tag(version) }
        if case .object(let meta)? = resource?["meta"], let url = meta["location"]?.stringValue { headers[.location] = url }
        return JSONResponse.make(bytes: StrictJSON.serialize(.object(body)), status: status, headers: headers, contentType: SCIMMedia.type)
    }

    /// An integer query parameter; nil when absent.
    static func integer(_ query: [String: String], _ name: String) throws(SCIMError) -> Int? {
        guard let text = query[name] else { return nil }
        guard text.utf8.count <= 10, let value = Int(text) else { throw SCIMError(.badRequest, .invalidValue, "'\(name)' is an integer") }
        return value
    }
}

/// A SCIM request body: `application/scim+json` or `application/json`, at most `http.maxBodySize`, one JSON object
/// with no member twice and no NUL.
enum SCIMRequestBody {
    static func read(_ request: Request, maxSize: Int) async throws -> JSONObject {
        let mediaType = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard mediaType == SCIMMedia.type || mediaType == "application/json" else {
            throw SCIMError(.unsupportedMediaType, nil, "Content-Type must be \(SCIMMedia.type) (or application/json)")
        }
        let bytes: [UInt8]
        do {
            bytes = Array(try await request.body.collect(upTo: maxSize).readableBytesView)
        } catch {
            throw SCIMError(.contentTooLarge, .tooMany, "the body is larger than \(maxSize) bytes (http.maxBodySize)")
        }
        do throws(RequestJSONRefusal) {
            return try requestJSONObject(bytes)
        } catch .malformed(let detail) {
            throw SCIMError(.badRequest, .invalidSyntax, "the body is not a JSON object: \(detail)")
        } catch {
            throw SCIMError(.badRequest, .invalidSyntax, "the body's strings must not contain NUL (\\u0000)")
        }
    }
}

/// A search, from the query (`GET /Users`) or from a SearchRequest body (`POST /.search`, RFC 7644 §3.4.3).
struct SCIMSearch {
    static let schema = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"

    var filter: String?
    var startIndex: Int?
    var count: Int?
    var projection: SCIMProjection

    init(filter: String?, startIndex: Int?, count: Int?, projection: SCIMProjection) {
        (self.filter, self.startIndex, self.count, self.projection) = (filter, startIndex, count, projection)
    }

    /// A list's query (`GET /Users`, `GET /Groups`), read once: `filter`, `startIndex`, `count` and the projection.
    init(query request: Request) throws(SCIMError) {
        let query = try SCIMUserRoutes.query(request)
        self.init(
            filter: query["filter"], startIndex: try SCIMUserRoutes.integer(query, "startIndex"), count: try SCIMUserRoutes.integer(query, "count"),
            projection: try SCIMUserRoutes.projection(query)
        )
    }

    /// `startIndex` as a 1-based index (RFC 7644 §3.4.2.4: below 1 is 1).
    var firstIndex: Int { max(startIndex ?? 1, 1) }
    /// `count` within 0…`SCIMDiscoveryRoutes.maxResults`, that when absent.
    var pageSize: Int { min(max(count ?? SCIMDiscoveryRoutes.maxResults, 0), SCIMDiscoveryRoutes.maxResults) }

    init(body: JSONObject) throws(SCIMError) {
        let members = try Members(body, at: nil)
        try members.refuseUnknown(["schemas", "attributes", "excludedAttributes", "filter", "startIndex", "count", "sortBy", "sortOrder"])
        try members.schemas(listing: Self.schema)
        if members["sortBy"] != nil && members["sortBy"] != .null {
            throw SCIMError(.badRequest, .invalidValue, "sorting is not supported (ServiceProviderConfig: sort.supported false)")
        }
        func strings(_ name: String) throws(SCIMError) -> [String] {
            switch members[name] {
            case nil, .null?: return []
            case .array(let values)?:
                return try values.map { value throws(SCIMError) in
                    guard let text = value.stringValue else { throw SCIMError(.badRequest, .invalidValue, "'\(name)' lists attribute paths (strings)") }
                    return text
                }
            default: throw SCIMError(.badRequest, .invalidValue, "'\(name)' is an array of attribute paths")
            }
        }
        func integer(_ name: String) throws(SCIMError) -> Int? {
            switch members[name] {
            case nil, .null?: return nil
            case let value?:
                guard let number = value.intValue, let int = Int(exactly: number), abs(int) < 1_000_000_000 else {
                    throw SCIMError(.badRequest, .invalidValue, "'\(name)' is an integer")
                }
                return int
            }
        }
        self.init(
            filter: try members.text("filter"), startIndex: try integer("startIndex"), count: try integer("count"),
            projection: try SCIMProjection(attributes: try strings("attributes"), excludedAttributes: try strings("excludedAttributes"))
        )
    }
}
