// /Groups (RFC 7644 §3.2–3.6): thin — read the request, call SCIMGroupService, answer application/scim+json.
import Foundation
import Hummingbird
import KeywardJOSE

struct SCIMGroupRoutes {
    let service: SCIMGroupService
    let maxBodySize: Int

    func register(on realm: RouterGroup<KeywardRequestContext>) {
        realm.get("Groups") { request, context in
            let search = try SCIMSearch(query: request)
            let listing = try await service.list(
                realm: try context.realm.name, filter: search.filter, startIndex: search.firstIndex, count: search.pageSize,
                withMembers: search.projection.returns("members")
            )
            return SCIMUserRoutes.listResponse(total: listing.total, startIndex: search.firstIndex, resources: listing.resources, projection: search.projection)
        }
        realm.post("Groups") { request, context in
            let projection = try SCIMUserRoutes.projection(request)
            let body = try await SCIMRequestBody.read(request, maxSize: maxBodySize)
            let (group, resource) = try await service.create(realm: try context.realm.name, body: body)
            return SCIMUserRoutes.answer(projection.apply(resource), version: group.revision, status: .created, location: resource)
        }
        realm.get("Groups/:id") { request, context in
            let projection = try SCIMUserRoutes.projection(request)
            let (group, resource) = try await service.group(
                realm: try context.realm.name, id: context.decodedParameter("id"), withMembers: projection.returns("members")
            )
            return SCIMUserRoutes.answer(projection.apply(resource), version: group.revision)
        }
        realm.put("Groups/:id") { request, context in
            let projection = try SCIMUserRoutes.projection(request)
            let body = try await SCIMRequestBody.read(request, maxSize: maxBodySize)
            let (group, resource) = try await service.replace(
                realm: try context.realm.name, id: context.decodedParameter("id"), body: body, ifMatch: request.headers.values(.ifMatch)
            )
            return SCIMUserRoutes.answer(projection.apply(resource), version: group.revision)
        }
        realm.patch("Groups/:id") { request, context in
            let projection = try SCIMUserRoutes.projection(request)
            let body = try await SCIMRequestBody.read(request, maxSize: maxBodySize)
            let (group, resource) = try await service.patch(
                realm: try context.realm.name, id: context.decodedParameter("id"), body: body, ifMatch: request.headers.values(.ifMatch)
            )
            return SCIMUserRoutes.answer(projection.apply(resource), version: group.revision)
        }
        realm.delete("Groups/:id") { request, context in
            try await service.delete(realm: try context.realm.name, id: context.decodedParameter("id"), ifMatch: request.headers.values(.ifMatch))
            return Response(status: .noContent, headers: [.cacheControl: "no-store"])
        }
    }
}
