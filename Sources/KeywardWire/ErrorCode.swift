/// Stable machine-readable error codes. Clients may switch on these; never rename one.
public enum ErrorCode: String, Codable, Sendable, CaseIterable {
    // OAuth 2.0 (RFC 6749 §5.2) and DPoP (RFC 9449) codes, used verbatim on the token endpoint.
    case invalidRequest = "invalid_request"
    case invalidClient = "invalid_client"
    case invalidGrant = "invalid_grant"
    case unauthorizedClient = "unauthorized_client"
    case unsupportedGrantType = "unsupported_grant_type"
    case invalidScope = "invalid_scope"
    case invalidDPoPProof = "invalid_dpop_proof"
    case useDPoPNonce = "use_dpop_nonce"
    // Resource-server codes (RFC 6750 §3.1).
    case invalidToken = "invalid_token"
    // Keyward's own codes.
    case notFound = "not_found"
    case realmNotFound = "realm_not_found"
    case methodNotAllowed = "method_not_allowed"
    case payloadTooLarge = "payload_too_large"
    case unsupportedMediaType = "unsupported_media_type"
    case unavailable = "unavailable"
    case internalError = "internal_error"
}

/// The JSON error body of Keyward's own API routes.
public struct APIErrorBody: Codable, Sendable, Equatable {
    public var error: ErrorCode
    public var message: String
    public var requestId: String?

    public init(error: ErrorCode, message: String, requestId: String? = nil) {
        self.error = error
        self.message = message
        self.requestId = requestId
    }
}

/// The OAuth error body (RFC 6749 §5.2), used by the token endpoint.
public struct OAuthErrorBody: Codable, Sendable, Equatable {
    public var error: ErrorCode
    public var errorDescription: String?
    /// Keyward's stable name for the rule that refused the request, where one is finer than `error` (host-token
    /// exchanges: `expired`, `jti_replayed`, `subject_not_enrolled`, …). An extension member (RFC 6749 §5.2 allows them).
    public var reason: String?

    public init(error: ErrorCode, errorDescription: String?, reason: String? = nil) {
        self.error = error
        self.errorDescription = errorDescription
        self.reason = reason
    }

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
        case reason
    }
}
