// GET ServiceProviderConfig, ResourceTypes and Schemas (RFC 7644 §4, RFC 7643 §5–7): what this SCIM service
// supports and the attributes it keeps, for the directory to read.
import Hummingbird
import KeywardJOSE
import KeywardWire

struct SCIMDiscoveryRoutes {
    let publicURL: String

    /// The most resources one list answers (`count` above it is lowered to it, RFC 7644 §3.4.2.4).
    static let maxResults = 200

    func register(on group: RouterGroup<KeywardRequestContext>) {
        group.get("ServiceProviderConfig") { _, context in
            serviceProviderConfig(realm: try context.realm.name)
        }
        group.get("ResourceTypes") { _, context in
            SCIMUserRoutes.answer(Self.list([resourceType(realm: try context.realm.name)]))
        }
        group.get("ResourceTypes/:id") { _, context in
            guard context.decodedParameter("id") == "User" else { throw SCIMError(.notFound, nil, "no resource type '\(context.decodedParameter("id"))': Keyward serves User") }
            return SCIMUserRoutes.answer(resourceType(realm: try context.realm.name))
        }
        group.get("Schemas") { _, context in
            let realm = try context.realm.name
            return SCIMUserRoutes.answer(Self.list(Self.schemas.map { schema(realm: realm, $0) }))
        }
        group.get("Schemas/:id") { _, context in
            let id = context.decodedParameter("id")
            guard let found = Self.schemas.first(where: { $0.id == id }) else { throw SCIMError(.notFound, nil, "no schema '\(id)'") }
            return SCIMUserRoutes.answer(schema(realm: try context.realm.name, found))
        }
    }

    private static let schemas: [(id: String, name: String, description: String, attributes: [SCIMAttribute])] = [
        (SCIMUserSchema.core, "User", "A person who signs in to the realm", SCIMUserSchema.coreAttributes),
        (SCIMUserSchema.enterprise, "EnterpriseUser", "What an organization keeps about a person", SCIMUserSchema.enterpriseAttributes),
    ]

    private static func list(_ resources: [JSONObject]) -> JSONObject {
        [
            "schemas": .array([.string(SCIMUserRoutes.listSchema)]), "totalResults": .number(Double(resources.count)),
            "startIndex": .number(1), "itemsPerPage": .number(Double(resources.count)), "Resources": .array(resources.map(JSONValue.object)),
        ]
    }

    private func schema(realm: String, _ schema: (id: String, name: String, description: String, attributes: [SCIMAttribute])) -> JSONObject {
        [
            "schemas": .array([.string("urn:ietf:params:scim:schemas:core:2.0:Schema")]), "id": .string(schema.id), "name": .string(schema.name),
            "description": .string(schema.description), "attributes": .array(schema.attributes.map(\.json)),
            "meta": .object(["resourceType": .string("Schema"), "location": .string(SCIMPaths.base(publicURL: publicURL, realm: realm) + "/Schemas/" + schema.id)]),
        ]
    }

    private func resourceType(realm: String) -> JSONObject {
        [
            "schemas": .array([.string("urn:ietf:params:scim:schemas:core:2.0:ResourceType")]), "id": .string("User"), "name": .string("User"),
            "endpoint": .string("/Users"), "description": .string("The realm's users"), "schema": .string(SCIMUserSchema.core),
            "schemaExtensions": .array([.object(["schema": .string(SCIMUserSchema.enterprise), "required": .bool(false)])]),
            "meta": .object(["resourceType": .string("ResourceType"), "location": .string(SCIMPaths.base(publicURL: publicURL, realm: realm) + "/ResourceTypes/User")]),
        ]
    }

    private func serviceProviderConfig(realm: String) -> Response {
        let location = SCIMPaths.base(publicURL: publicURL, realm: realm) + "/ServiceProviderConfig"
        let body: JSONObject = [
            "schemas": .array([.string("urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig")]),
            "patch": .object(["supported": .bool(true)]),
            "bulk": .object(["supported": .bool(false), "maxOperations": .number(0), "maxPayloadSize": .number(0)]),
            "filter": .object(["supported": .bool(true), "maxResults": .number(Double(Self.maxResults))]),
            "changePassword": .object(["supported": .bool(false)]),
            "sort": .object(["supported": .bool(false)]),
            "etag": .object(["supported": .bool(true)]),
            "authenticationSchemes": .array([
                .object([
                    "type": .string("oauthbearertoken"), "name": .string("SCIM token"), "primary": .bool(true),
                    "description": .string("A bearer token of the realm, made with keyward scim-tokens create; or an admin client's DPoP-bound token with users:read / users:write"),
                ]),
            ]),
            "meta": .object(["resourceType": .string("ServiceProviderConfig"), "location": .string(location)]),
        ]
        return JSONResponse.make(bytes: StrictJSON.serialize(body), headers: [.cacheControl: "no-store"], contentType: SCIMMedia.type)
    }
}

enum SCIMPaths {
    /// `/scim/v2/realms/{realm}`: every SCIM resource of a realm is under it.
    static func base(publicURL: String, realm: String) -> String {
        publicURL + "/scim/v2/realms/" + realm
    }
}
