// GET ServiceProviderConfig (RFC 7644 §4, RFC 7643 §5): what this SCIM service supports, for the directory to read.
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
