// /Users (RFC 7644 §3.2–3.6): thin — read the request, call SCIMUserService, answer application/scim+json.
import Foundation
import Hummingbird
import KeywardJOSE
import KeywardWire

struct SCIMUserRoutes {
    let service: SCIMUserService
    let maxBodySize: Int

    static let listSchema = "urn:ietf:params:scim:api:messages:2.0:ListResponse"

    func register(on realm: RouterGroup<KeywardRequestContext>) {
        realm.get("Users") { request, context in
            let query = request.uri.queryParameters
            let startIndex = try Self.integer(query, "startIndex").map { max($0, 1) } ?? 1
            let count = try Self.integer(query, "count").map { min(max($0, 0), SCIMDiscoveryRoutes.maxResults) } ?? SCIMDiscoveryRoutes.maxResults
            let filter = query["filter"].map(String.init)
            let listing = try await service.list(realm: try context.realm.name, filter: filter, startIndex: startIndex, count: count)
            let body: JSONObject = [
                "schemas": .array([.string(Self.listSchema)]), "totalResults": .number(Double(listing.total)),
                "startIndex": .number(Double(listing.startIndex)), "itemsPerPage": .number(Double(listing.resources.count)),
                "Resources": .array(listing.resources.map(JSONValue.object)),
            ]
            return Self.answer(body)
        }
        realm.post("Users") { request, context in
            let body = try await SCIMRequestBody.read(request, maxSize: maxBodySize)
            let (user, resource) = try await service.create(realm: try context.realm.name, body: body)
            return Self.answer(resource, user: user, status: .created, location: true)
        }
        realm.get("Users/:id") { _, context in
            let (user, resource) = try await service.user(realm: try context.realm.name, id: context.decodedParameter("id"))
            return Self.answer(resource, user: user)
        }
        realm.put("Users/:id") { request, context in
            let body = try await SCIMRequestBody.read(request, maxSize: maxBodySize)
            let (user, resource) = try await service.replace(
                realm: try context.realm.name, id: context.decodedParameter("id"), body: body, ifMatch: request.headers.values(.ifMatch)
            )
            return Self.answer(resource, user: user)
        }
        realm.patch("Users/:id") { request, context in
            let body = try await SCIMRequestBody.read(request, maxSize: maxBodySize)
            let (user, resource) = try await service.patch(
                realm: try context.realm.name, id: context.decodedParameter("id"), body: body, ifMatch: request.headers.values(.ifMatch)
            )
            return Self.answer(resource, user: user)
        }
        realm.delete("Users/:id") { request, context in
            try await service.delete(realm: try context.realm.name, id: context.decodedParameter("id"), ifMatch: request.headers.values(.ifMatch))
            return Response(status: .noContent, headers: [.cacheControl: "no-store"])
        }
    }

    static func answer(_ body: JSONObject, user: User? = nil, status: HTTPResponse.Status = .ok, location: Bool = false) -> Response {
        var headers: HTTPFields = [.cacheControl: "no-store"]
        if let user { headers[.eTag] = SCIMVersion.tag(user.revision) }
        if location, case .object(let meta)? = body["meta"], let url = meta["location"]?.stringValue { headers[.location] = url }
        return JSONResponse.make(bytes: StrictJSON.serialize(.object(body)), status: status, headers: headers, contentType: SCIMMedia.type)
    }

    /// An integer query parameter; nil when absent.
    static func integer(_ query: Hummingbird.Parameters, _ name: String) throws(SCIMError) -> Int? {
        guard let text = query[Substring(name)] else { return nil }
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
