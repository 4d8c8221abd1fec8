// What Keyward uses of a provider's discovery document, fetched and cached per node.
import Foundation
import KeywardJOSE
import Logging

/// What Keyward uses of a provider's OpenID Connect discovery document (OpenID Connect Discovery 1.0 §3). Every
/// endpoint must be one Keyward may call (`OutboundURL`); the issuer is compared with the configured one at each
/// use, exactly (§4.3: a document naming another issuer is someone else's).
struct IdentityProviderMetadata: Sendable, Equatable {
    var issuer: String
    var authorizationEndpoint: String
    var tokenEndpoint: String
    var jwksURI: String
    /// The id_token algorithms Keyward verifies that the provider says it uses; never `none`.
    var idTokenAlgorithms: Set<JWSAlgorithm>
    /// How the client authenticates at the token endpoint: `client_secret_basic` unless the provider lists only
    /// `client_secret_post`.
    var usesSecretPost: Bool

    init(
        issuer: String, authorizationEndpoint: String, tokenEndpoint: String, jwksURI: String, idTokenAlgorithms: Set<JWSAlgorithm>, usesSecretPost: Bool
    ) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.jwksURI = jwksURI
        self.idTokenAlgorithms = idTokenAlgorithms
        self.usesSecretPost = usesSecretPost
    }

    /// Sign in with Apple's web flow has no discovery document to follow: its endpoints are the configured ones,
    /// its id_tokens RS256, its client secret sent in the form.
    static func apple(_ provider: IdentityProvider) throws(SignInFailure) -> IdentityProviderMetadata {
        guard let endpoints = provider.endpoints, let jwks = endpoints.jwks else {
            throw SignInFailure(.providerMisconfigured, "apple provider '\(provider.alias)' has no endpoints configured")
        }
        return IdentityProviderMetadata(
            issuer: provider.issuer, authorizationEndpoint: endpoints.authorization, tokenEndpoint: endpoints.token, jwksURI: jwks,
            idTokenAlgorithms: [.rs256], usesSecretPost: true
        )
    }

    static func discoveryURL(issuer: String) -> String {
        (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/.well-known/openid-configuration"
    }

    init(json bytes: [UInt8]) throws(DocumentProblem) {
        let document: JSONObject
        do {
            document = try StrictJSON.parseObject(bytes)
        } catch {
            throw DocumentProblem("the discovery document is not a JSON object: \(error.message)")
        }
        func endpoint(_ name: String) throws(DocumentProblem) -> String {
            guard let url = document.string(name) else { throw DocumentProblem("the discovery document has no \(name)") }
            if let problem = OutboundURL.problem(url) { throw DocumentProblem("\(name): \(problem)") }
            return url
        }
        guard let issuer = document.string("issuer") else { throw DocumentProblem("the discovery document has no issuer") }
        self.issuer = issuer
        authorizationEndpoint = try endpoint("authorization_endpoint")
        tokenEndpoint = try endpoint("token_endpoint")
        jwksURI = try endpoint("jwks_uri")
        if let methods = document.array("code_challenge_methods_supported")?.compactMap(\.stringValue), !methods.contains("S256") {
            throw DocumentProblem("the provider does not support PKCE with S256 (code_challenge_methods_supported: \(methods))")
        }
        let listed = document.array("id_token_signing_alg_values_supported")?.compactMap(\.stringValue) ?? ["RS256"]
        idTokenAlgorithms = Set(listed.compactMap(JWSAlgorithm.init(rawValue:)))
        guard !idTokenAlgorithms.isEmpty else {
            throw DocumentProblem("none of the provider's id_token algorithms (\(listed)) is one Keyward verifies")
        }
        let authMethods = document.array("token_endpoint_auth_methods_supported")?.compactMap(\.stringValue) ?? ["client_secret_basic"]
        usesSecretPost = !authMethods.contains("client_secret_basic") && authMethods.contains("client_secret_post")
    }
}

/// Providers' discovery documents, per node: the published-document rules (freshness from Cache-Control, an hour
/// without one; last good kept; fetches rate-limited).
struct IdentityProviderMetadataCache: Sendable {
    static let defaultFreshness: TimeInterval = 3600
    private let documents: PublishedDocumentCache<IdentityProviderMetadata>

    init(fetcher: any DocumentFetcher, clock: any KeywardClock, logger: Logger) {
        documents = PublishedDocumentCache(
            kind: "provider discovery document", fetcher: fetcher, clock: clock, logger: logger, defaultFreshness: Self.defaultFreshness
        ) { body in
            do throws(DocumentProblem) {
                return .success(try IdentityProviderMetadata(json: body))
            } catch {
                return .failure(error)
            }
        }
    }

    /// The provider's metadata, or why there is none to use.
    func metadata(for provider: IdentityProvider) async throws(SignInFailure) -> IdentityProviderMetadata {
        if provider.kind == .apple { return try IdentityProviderMetadata.apple(provider) }
        guard let metadata = await documents.value(url: IdentityProviderMetadata.discoveryURL(issuer: provider.issuer), owner: provider.alias) else {
            throw SignInFailure(.providerUnavailable, "the discovery document of provider '\(provider.alias)' cannot be fetched now")
        }
        guard metadata.issuer == provider.issuer else {
            throw SignInFailure(.providerMisconfigured, "provider '\(provider.alias)' publishes issuer \(metadata.issuer), not the configured \(provider.issuer)")
        }
        return metadata
    }
}
