// Refusals from the token endpoint and protected resources, and the OAuth error response they become.
import HTTPTypes
import Hummingbird
import KeywardWire

/// A refusal from the token endpoint or a protected resource, ready to be rendered by a route:
/// the OAuth error code, a description naming the input at fault, and the challenge headers to send.
public struct OAuthFailure: Error, Equatable, Sendable {
    public var status: Int
    public var code: ErrorCode
    public var description: String
    /// `WWW-Authenticate` value, when the refusal is an authentication challenge.
    public var challenge: String?
    /// Why DPoP refused the request, for metrics (nil for other failures).
    public var dpopReason: DPoPRejection?
    /// A fresh nonce to send as `DPoP-Nonce`, when the refusal is `use_dpop_nonce`.
    public var dpopNonce: String?
    /// Which rule refused the request, stable and finer than `code` (`reason` in the body), where a grant names one.
    public var reason: String?

    public init(
        status: Int, code: ErrorCode, description: String, challenge: String? = nil, dpopReason: DPoPRejection? = nil, dpopNonce: String? = nil,
        reason: String? = nil
    ) {
        self.reason = reason
        self.status = status
        self.code = code
        self.description = description
        self.challenge = challenge
        self.dpopReason = dpopReason
        self.dpopNonce = dpopNonce
    }

    static func invalidRequest(_ description: String) -> OAuthFailure {
        OAuthFailure(status: 400, code: .invalidRequest, description: description)
    }

    /// The database could not be read or written: nothing is wrong with the request, which may be sent again.
    static let temporarilyUnavailable = OAuthFailure(status: 503, code: .unavailable, description: "the token service is temporarily unavailable")

    /// RFC 6749 §5.2 `invalid_grant`, with the rule that refused it (`reason`).
    static func invalidGrant(_ description: String, reason: String) -> OAuthFailure {
        OAuthFailure(status: 400, code: .invalidGrant, description: description, reason: reason)
    }
}

extension JSONResponse {
    /// RFC 6749 §5.2 error body, plus any authentication challenge.
    static func oauthError(_ failure: OAuthFailure) -> Response {
        var headers: HTTPFields = [.cacheControl: "no-store"]
        if let challenge = failure.challenge { headers[.wwwAuthenticate] = challenge }
        if let nonce = failure.dpopNonce { headers[.dpopNonce] = nonce }
        return make(
            OAuthErrorBody(error: failure.code, errorDescription: failure.description, reason: failure.reason),
            status: HTTPResponse.Status(code: failure.status), headers: headers
        )
    }
}
