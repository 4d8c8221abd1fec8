// POST …/Users/.search, …/Groups/.search and …/.search (RFC 7644 §3.4.3): a search in a body, kept out of URLs
// and logs; at the root, across users and groups.
import Hummingbird
import KeywardJOSE

struct SCIMSearchRoutes {
    let users: SCIMUserService
    let groups: SCIMGroupService
    let maxBodySize: Int

    func register(on realm: RouterGroup<KeywardRequestContext>) {
        realm.post("Users/.search") { request, context in
            let search = try await Self.search(request, maxSize: maxBodySize)
            let listing = try await users.list(realm: try context.realm.name, filter: search.filter, startIndex: search.firstIndex, count: search.pageSize)
            return SCIMUserRoutes.listResponse(total: listing.total, startIndex: search.firstIndex, resources: listing.resources, projection: search.projection)
        }
        realm.post("Groups/.search") { request, context in
            let search = try await Self.search(request, maxSize: maxBodySize)
            let listing = try await groups.list(
                realm: try context.realm.name, filter: search.filter, startIndex: search.firstIndex, count: search.pageSize,
                withMembers: search.projection.returns("members")
            )
            return SCIMUserRoutes.listResponse(total: listing.total, startIndex: search.firstIndex, resources: listing.resources, projection: search.projection)
        }
        realm.post(".search") { request, context in
            let search = try await Self.search(request, maxSize: maxBodySize)
            let (total, resources) = try await everything(search, realm: try context.realm.name)
            return SCIMUserRoutes.listResponse(total: total, startIndex: search.firstIndex, resources: resources, projection: search.projection)
        }
    }

    private static func search(_ request: Request, maxSize: Int) async throws -> SCIMSearch {
        try SCIMSearch(body: try await SCIMRequestBody.read(request, maxSize: maxSize))
    }

    /// Users, then groups, as one list: the page starts in the users and goes on into the groups. A filter that names
    /// what one resource type does not have finds none of that type; one that neither can take is `invalidFilter`.
    private func everything(_ search: SCIMSearch, realm: String) async throws -> (Int, [JSONObject]) {
        let offset = search.firstIndex - 1
        var refusal: SCIMError?
        var userTotal = 0
        var resources: [JSONObject] = []
        do {
            let listing = try await users.list(realm: realm, filter: search.filter, startIndex: search.firstIndex, count: search.pageSize)
            (userTotal, resources) = (listing.total, listing.resources)
        } catch let error as SCIMError where error.scimType == .invalidFilter {
            refusal = error
        }
        var groupTotal = 0
        do {
            let groupOffset = max(offset - userTotal, 0)
            let listing = try await groups.list(
                realm: realm, filter: search.filter, startIndex: groupOffset + 1, count: search.pageSize - resources.count,
                withMembers: search.projection.returns("members")
            )
            groupTotal = listing.total
            resources += listing.resources
        } catch let error as SCIMError where error.scimType == .invalidFilter {
            if let refusal { throw refusal }
        }
        return (userTotal + groupTotal, resources)
    }
}
