// The admin API's identity providers: list, register, read, remove (what `keyward providers` does).
import Foundation
import Hummingbird

/// `/admin/realms/{realm}/providers…`. Secrets go in (`client_secret`, Apple's `apple_private_key`) and are stored
/// sealed; they never come out.
struct AdminProviderRoutes {
    let providers: IdentityProviderService
    let publicURL: String
    let maxBodySize: Int

    func register(on realm: RouterGroup<KeywardRequestContext>) {
        realm.get("providers") { request, context in
            try context.admin.require(.providersRead)
            let page = try AdminPage(request)
            return page.response(all: try await providers.list(realm: try context.realm.name), key: \.alias, render: body, request: request)
        }
        realm.post("providers") { request, context in
            try context.admin.require(.providersWrite)
            try context.admin.require(.usersWrite, vouching: true)
            var input = try await AdminRequestBody.read(request, maxSize: maxBodySize)
            let alias = try input.requiredString("alias", maxLength: 64)
            let typeName = try input.requiredString("type", maxLength: 16)
            guard let kind = IdentityProvider.Kind(rawValue: typeName) else {
                throw AdminProblem.invalid("type must be one of: oidc, google, apple, facebook", field: "type")
            }
            let registration = IdentityProviderService.Registration(
                realm: try context.realm.name, alias: alias, kind: kind, issuer: try input.string("issuer", maxLength: 2048),
                clientId: try input.requiredString("client_id", maxLength: 512), clientSecret: try input.string("client_secret", maxLength: 4096),
                scopes: try input.strings("scopes", maxCount: 32, maxLength: 128), displayName: try input.string("display_name", maxLength: 128),
                trustVerifiedEmail: try input.bool("trust_verified_email") ?? false, hostedDomain: try input.string("hosted_domain", maxLength: 256),
                usernameClaim: try input.string("username_claim", maxLength: 64),
                authorizationEndpoint: try input.string("authorization_endpoint", maxLength: 2048),
                tokenEndpoint: try input.string("token_endpoint", maxLength: 2048), jwksURI: try input.string("jwks_uri", maxLength: 2048),
                userinfoEndpoint: try input.string("userinfo_endpoint", maxLength: 2048), appleTeamId: try input.string("apple_team_id", maxLength: 64),
                appleKeyId: try input.string("apple_key_id", maxLength: 64), applePrivateKeyPEM: try input.string("apple_private_key", maxLength: 8192)
            )
            try input.finish()
            let added = try await providers.add(registration)
            return AdminJSON.make(body(added), status: .created, headers: [.location: request.uri.path + "/" + pathSegment(added.alias), .cacheControl: "no-store"])
        }
        realm.get("providers/:alias") { _, context in
            try context.admin.require(.providersRead)
            let alias = context.decodedParameter("alias")
            guard let provider = try await providers.provider(realm: try context.realm.name, alias: alias) else {
                throw IdentityProviderError.notFound(String(alias.prefix(64)))
            }
            return AdminJSON.make(body(provider), headers: [.cacheControl: "no-store"])
        }
        realm.delete("providers/:alias") { _, context in
            try context.admin.require(.providersWrite)
            try await providers.remove(realm: try context.realm.name, alias: String((context.decodedParameter("alias")).prefix(64)))
            return Response(status: .noContent)
        }
    }

    private func body(_ provider: IdentityProvider) -> AdminProviderBody {
        AdminProviderBody(provider, redirectURI: IdentityProvider.redirectURI(publicURL: publicURL, realm: provider.realm, alias: provider.alias))
    }
}

struct AdminProviderBody: Encodable {
    let alias: String
    let type: String
    let issuer: String
    let clientId: String
    let hasClientSecret: Bool
    let scopes: [String]
    let displayName: String
    let trustVerifiedEmail: Bool
    let hostedDomain: String?
    let usernameClaim: String?
    let authorizationEndpoint: String?
    let tokenEndpoint: String?
    let jwksUri: String?
    let userinfoEndpoint: String?
    let appleTeamId: String?
    let appleKeyId: String?
    /// What the provider must be configured with as the redirect URI.
    let redirectUri: String
    let createdAt: String

    init(_ provider: IdentityProvider, redirectURI: String) {
        (alias, type, issuer, clientId) = (provider.alias, provider.kind.rawValue, provider.issuer, provider.clientId)
        hasClientSecret = provider.sealedClientSecret != nil || provider.appleKey != nil
        (scopes, displayName, trustVerifiedEmail) = (provider.scopes, provider.displayName, provider.trustVerifiedEmail)
        (hostedDomain, usernameClaim) = (provider.hostedDomain, provider.usernameClaim)
        (authorizationEndpoint, tokenEndpoint) = (provider.endpoints?.authorization, provider.endpoints?.token)
        (jwksUri, userinfoEndpoint) = (provider.endpoints?.jwks, provider.endpoints?.userinfo)
        (appleTeamId, appleKeyId) = (provider.appleKey?.teamId, provider.appleKey?.keyId)
        self.redirectUri = redirectURI
        createdAt = provider.createdAt.formatted(.iso8601)
    }
}
