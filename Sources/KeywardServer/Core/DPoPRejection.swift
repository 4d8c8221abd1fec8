// The closed set of reasons a DPoP request is refused, as metrics label them.
import KeywardJOSE

/// Why a DPoP-protected request or a DPoP token request was refused, as metrics count it. A closed set:
/// a label never carries request text, so unauthenticated callers cannot add metric series.
public enum DPoPRejection: Sendable, Equatable {
    /// No `Authorization` header.
    case tokenMissing
    /// More than one `Authorization` header, another scheme than DPoP (or Bearer where tolerated), no token.
    case authorizationMalformed
    /// The access token is larger than any Keyward issues.
    case tokenTooLarge
    /// The access token does not verify (signature, issuer, audience, lifetime, form).
    case tokenInvalid
    /// The access token carries no `cnf.jkt`.
    case tokenNotBound
    case proofMissing
    case multipleProofs
    /// The proof itself was refused, for the verifier's reason.
    case proof(DPoPError.Reason)
    /// The proof names no enrolled device (push-MFA device API).
    case unknownDevice
    /// The device proved itself, but its user is disabled (push-MFA device API).
    case userDisabled
    /// The token names a registered device that was removed, or no longer holds the token's key.
    case deviceRemoved
    /// Storage could not be asked.
    case unavailable

    public var label: String {
        switch self {
        case .tokenMissing: "token_missing"
        case .authorizationMalformed: "authorization_malformed"
        case .tokenTooLarge: "token_too_large"
        case .tokenInvalid: "invalid_token"
        case .tokenNotBound: "token_not_bound"
        case .proofMissing: "missing"
        case .multipleProofs: "multiple_headers"
        case .proof(let reason): reason.rawValue
        case .unknownDevice: "unknown_device"
        case .userDisabled: "user_disabled"
        case .deviceRemoved: "device_removed"
        case .unavailable: "unavailable"
        }
    }

    /// Where a rejection happened, the metric's other label.
    public enum Endpoint: String, Sendable {
        case token
        case resource
        case pushMFA = "push-mfa"
        /// The broker's hand-off take: a proof without a token.
        case broker
    }
}
