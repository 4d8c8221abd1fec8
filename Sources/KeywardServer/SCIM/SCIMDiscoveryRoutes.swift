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
            let realm = try context.realm.name
            return SCIMUserRoutes.answer(Self.list(Self.resourceTypes.map { resourceType(realm: realm, $0) }))
        }
        group.get("ResourceTypes/:id") { _, context in
            let id = context.decodedParameter("id")
            guard let found = Self.resourceTypes.first(where: { $0.id == id }) else {
                throw SCIMError(.notFound, nil, "no resource type '\(id.prefix(100))': Keyward serves User and Group")
            }
            return SCIMUserRoutes.answer(resourceType(realm: try context.realm.name, found))
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
        (SCIMGroupResource.schema, "Group", "A group of the realm's users", SCIMUserSchema.groupAttributes),
    ]

    private static let resourceTypes: [(id: String, endpoint: String, description: String, schema: String, extensions: [String])] = [
        ("User", "/Users", "The realm's users", SCIMUserSchema.core, [SCIMUserSchema.enterprise]),
        ("Group", "/Groups", "Groups of the realm's users", SCIMGroupResource.schema, []),
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

    private func resourceType(realm: String, _ type: (id: String, endpoint: String, description: String, schema: String, extensions: [String])) -> JSONObject {
        [
            "schemas": .array([.string("urn:ietf:params:scim:schemas:core:2.0:ResourceType")]), "id": .string(type.id), "name": .string(type.id),
            "endpoint": .string(type.endpoint), "description": .string(type.description), "schema": .string(type.schema),
            "schemaExtensions": .array(type.extensions.map { .object(["schema": .string($0), "required": .bool(false)]) }),
            "meta": .object([
                "resourceType": .string("ResourceType"), "location": .string(SCIMPaths.base(publicURL: publicURL, realm: realm) + "/ResourceTypes/" + type.id),
            ]),
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
