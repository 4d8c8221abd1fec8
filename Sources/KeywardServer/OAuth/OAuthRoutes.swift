// The OAuth core's routes: discovery, the JWK Set, the token endpoint and whoami.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardHTTPInput
import KeywardJOSE
import KeywardWire

/// HTTP surface of the OAuth core. Thin: parse, call the service, map the result.
struct OAuthRoutes {
    let realms: RealmService
    let keys: RealmKeyService
    let tokens: TokenService
    let endpoints: ProviderEndpoints
    let authentication: DPoPAuthentication
    let publicURL: String
    let maxBodySize: Int

    func register(on router: Router<KeywardRequestContext>) {
        let realmResolution = RealmResolution(realms: realms)
        let realm = router.group("/realms/:realm").add(middleware: realmResolution)
        realm.get(".well-known/openid-configuration") { _, context in try discovery(context.realm) }
        realm.get("protocol/openid-connect/certs") { _, context in try await certs(context.realm) }
        realm.group().add(middleware: authentication).get("v1/whoami", use: whoami)
        // RFC 6749 §5.2 bodies for every refusal, the realm's included.
        router.group("/realms/:realm/protocol/openid-connect/token").add(middleware: OAuthErrorBodies()).add(middleware: realmResolution)
            .post { request, context in try await token(request, context) }
    }

    private func discovery(_ realm: Realm) -> Response {
        let issuer = realms.issuer(of: realm.name)
        var metadata = ProviderMetadata(
            issuer: issuer,
            jwksURI: issuer + "/protocol/openid-connect/certs",
            tokenEndpoint: issuer + "/protocol/openid-connect/token",
            grantTypesSupported: tokens.grantTypes,
            // "none": public clients, which name themselves on the jwt-bearer grant (RFC 8414 §2).
            tokenEndpointAuthMethodsSupported: ["client_secret_basic", "client_secret_post", "none"],
            dpopSigningAlgValuesSupported: JWSAlgorithm.allCases.map(\.rawValue),
            idTokenSigningAlgValuesSupported: [realm.signingAlgorithm],
            responseTypesSupported: ["token"],
            subjectTypesSupported: ["public"],
            scopesSupported: []
        )
        if endpoints.serves(.authorization) {
            metadata.authorizationEndpoint = issuer + "/protocol/openid-connect/auth"
            metadata.responseTypesSupported = ["code"]
            metadata.responseModesSupported = ["query"]
            metadata.codeChallengeMethodsSupported = ["S256"]
            metadata.authorizationResponseIssParameterSupported = true
            metadata.acrValuesSupported = ["urn:keyward:acr:mfa", "urn:keyward:acr:1fa"]
            metadata.claimsSupported = ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "azp", "at_hash", "sid", "preferred_username"]
            metadata.scopesSupported = ["openid", "profile"]
        }
        if endpoints.serves(.endSession) { metadata.endSessionEndpoint = issuer + "/protocol/openid-connect/logout" }
        if endpoints.serves(.userinfo) { metadata.userinfoEndpoint = issuer + "/protocol/openid-connect/userinfo" }
        if endpoints.serves(.revocation) {
            metadata.revocationEndpoint = issuer + "/protocol/openid-connect/revoke"
            metadata.revocationEndpointAuthMethodsSupported = ["client_secret_basic", "client_secret_post", "none"]
        }
        if endpoints.serves(.pushedAuthorizationRequest) {
            metadata.pushedAuthorizationRequestEndpoint = issuer + "/protocol/openid-connect/ext/par"
            metadata.requirePushedAuthorizationRequests = false
        }
        return JSONResponse.make(metadata, headers: [.cacheControl: "public, max-age=300"])
    }

    private func certs(_ realm: Realm) async throws -> Response {
        let keySet = try await keys.publishedKeys(realm: realm.name)
        // Short max-age: a client that sees an unknown kid after a rotation refetches soon anyway.
        return JSONResponse.make(bytes: StrictJSON.serialize(keySet.jsonObject), headers: [.cacheControl: "public, max-age=60"], contentType: "application/jwk-set+json")
    }

    private func token(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let form = try await OAuthForm.read(request, maxBodySize: maxBodySize)
        let issued = try await tokens.token(TokenService.Request(
            realm: try context.realm, form: form, authorization: request.headers.values(.authorization),
            dpopProofs: request.headers.dpopProofs, url: publicURL + request.uri.path
        ))
        var headers: HTTPFields = [.cacheControl: "no-store", .init("Pragma")!: "no-cache"]
        if let nonce = issued.dpopNonce { headers[.dpopNonce] = nonce }
        return JSONResponse.token(issued.response, headers: headers)
    }

    @Sendable private func whoami(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let caller = try context.caller(DPoPResourceGuard.Caller.self)
        let claims = caller.claims
        let response = WhoAmIResponse(
            sub: caller.subject,
            azp: claims["azp"]?.stringValue,
            scope: claims["scope"]?.stringValue,
            // The resource policy requires a proof, so there is one.
            cnf: Confirmation(jkt: caller.proof?.thumbprint ?? ""),
            exp: claims["exp"]?.intValue ?? 0,
            iss: claims["iss"]?.stringValue ?? ""
        )
        return JSONResponse.make(response, headers: [.cacheControl: "no-store"])
    }
}

extension HTTPFields {
    func values(_ name: HTTPField.Name) -> [String] { self[values: name] }

    private static let dpop = HTTPField.Name("DPoP")!

    /// Every DPoP proof sent. A comma can't occur in a compact JWS, so a comma-joined header counts as several.
    var dpopProofs: [String] {
        self[values: Self.dpop].flatMap(\.commaSeparatedItems)
    }
}
