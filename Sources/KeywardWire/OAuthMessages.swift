/// Successful token endpoint answer (RFC 6749 §5.1, RFC 9449 §5).
public struct TokenResponse: Codable, Sendable, Equatable {
    public var accessToken: String
    /// "DPoP" when the token is bound to a proof key, otherwise "Bearer".
    public var tokenType: String
    public var expiresIn: Int
    public var scope: String?
    /// From the authorization_code and refresh_token grants: the next refresh token (rotated on every use).
    public var refreshToken: String?
    /// From the authorization_code grant when `openid` was asked for (OpenID Connect Core §3.1.3.3).
    public var idToken: String?

    public init(accessToken: String, tokenType: String, expiresIn: Int, scope: String?, refreshToken: String? = nil, idToken: String? = nil) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.scope = scope
        self.refreshToken = refreshToken
        self.idToken = idToken
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case scope
        case refreshToken = "refresh_token"
        case idToken = "id_token"
    }
}

/// `cnf` claim of a sender-constrained token (RFC 9449 §6.1).
public struct Confirmation: Codable, Sendable, Equatable {
    public var jkt: String

    public init(jkt: String) { self.jkt = jkt }
}

/// Answer of `GET /realms/{realm}/v1/whoami`: the caller's verified token claims.
public struct WhoAmIResponse: Codable, Sendable, Equatable {
    public var sub: String
    public var azp: String?
    public var scope: String?
    public var cnf: Confirmation?
    public var exp: Int64
    public var iss: String

    public init(sub: String, azp: String?, scope: String?, cnf: Confirmation?, exp: Int64, iss: String) {
        self.sub = sub
        self.azp = azp
        self.scope = scope
        self.cnf = cnf
        self.exp = exp
        self.iss = iss
    }
}

/// The subset of OpenID Provider metadata Keyward publishes (OpenID Connect Discovery 1.0 §3, RFC 8414).
public struct ProviderMetadata: Codable, Sendable, Equatable {
    public var issuer: String
    public var jwksURI: String
    public var tokenEndpoint: String
    public var grantTypesSupported: [String]
    public var tokenEndpointAuthMethodsSupported: [String]
    public var dpopSigningAlgValuesSupported: [String]
    public var idTokenSigningAlgValuesSupported: [String]
    public var responseTypesSupported: [String]
    public var subjectTypesSupported: [String]
    public var scopesSupported: [String]
    /// Named once the realm serves the authorization endpoint (issue 28), with what it supports.
    public var authorizationEndpoint: String?
    public var responseModesSupported: [String]?
    public var codeChallengeMethodsSupported: [String]?
    /// RFC 9207 §3: the authorization response carries `iss`.
    public var authorizationResponseIssParameterSupported: Bool?
    public var acrValuesSupported: [String]?
    public var claimsSupported: [String]?
    /// RFC 9126 §5.
    public var pushedAuthorizationRequestEndpoint: String?
    public var requirePushedAuthorizationRequests: Bool?
    public var userinfoEndpoint: String?
    /// OpenID Connect RP-Initiated Logout 1.0 §2.1.
    public var endSessionEndpoint: String?
    /// RFC 7009, RFC 8414 §2.
    public var revocationEndpoint: String?
    public var revocationEndpointAuthMethodsSupported: [String]?

    public init(
        issuer: String, jwksURI: String, tokenEndpoint: String, grantTypesSupported: [String],
        tokenEndpointAuthMethodsSupported: [String], dpopSigningAlgValuesSupported: [String],
        idTokenSigningAlgValuesSupported: [String], responseTypesSupported: [String],
        subjectTypesSupported: [String], scopesSupported: [String]
    ) {
        self.issuer = issuer
        self.jwksURI = jwksURI
        self.tokenEndpoint = tokenEndpoint
        self.grantTypesSupported = grantTypesSupported
        self.tokenEndpointAuthMethodsSupported = tokenEndpointAuthMethodsSupported
        self.dpopSigningAlgValuesSupported = dpopSigningAlgValuesSupported
        self.idTokenSigningAlgValuesSupported = idTokenSigningAlgValuesSupported
        self.responseTypesSupported = responseTypesSupported
        self.subjectTypesSupported = subjectTypesSupported
        self.scopesSupported = scopesSupported
    }

    enum CodingKeys: String, CodingKey {
        case issuer
        case jwksURI = "jwks_uri"
        case tokenEndpoint = "token_endpoint"
        case grantTypesSupported = "grant_types_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case dpopSigningAlgValuesSupported = "dpop_signing_alg_values_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case responseTypesSupported = "response_types_supported"
        case subjectTypesSupported = "subject_types_supported"
        case scopesSupported = "scopes_supported"
        case authorizationEndpoint = "authorization_endpoint"
        case responseModesSupported = "response_modes_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
        case acrValuesSupported = "acr_values_supported"
        case claimsSupported = "claims_supported"
        case pushedAuthorizationRequestEndpoint = "pushed_authorization_request_endpoint"
        case requirePushedAuthorizationRequests = "require_pushed_authorization_requests"
        case userinfoEndpoint = "userinfo_endpoint"
        case endSessionEndpoint = "end_session_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case revocationEndpointAuthMethodsSupported = "revocation_endpoint_auth_methods_supported"
    }
}
