// Why a host token was refused at the token endpoint: a stable reason and the OAuth answer it becomes.
import KeywardJOSE
import KeywardWire

/// Why a host token was refused at the token endpoint: a stable `reason` (the body's `reason` member, and the
/// metric label) and a description naming the rule and the value at fault.
struct HostTokenRefusal: Error, Equatable {
    enum Reason: String, Sendable, CaseIterable {
        // The token's form and header.
        case tooLarge = "too_large"
        case malformed
        case duplicateMember = "duplicate_member"
        case typeMismatch = "typ_mismatch"
        case algorithmNotAllowed = "alg_not_allowed"
        // The issuer and its keys.
        case unknownIssuer = "unknown_issuer"
        case unknownKey = "unknown_kid"
        case keyMismatch = "alg_key_mismatch"
        case keyExpired = "key_expired"
        case keysUnavailable = "keys_unavailable"
        /// The registry or the enrolled users could not be read.
        case storeUnavailable = "store_unavailable"
        case badSignature = "bad_signature"
        // The claims.
        case missingClaim = "missing_claim"
        case invalidClaim = "invalid_claim"
        case audienceMismatch = "aud_mismatch"
        case expired
        case notYetValid = "not_yet_valid"
        case issuedInFuture = "iat_in_future"
        case lifetimeTooLong = "lifetime_too_long"
        case jtiReplayed = "jti_replayed"
        /// The host token's `cnf.jkt` names another key than the DPoP proof's.
        case keyBindingMismatch = "cnf_mismatch"
        // The user and the client.
        case subjectNotEnrolled = "subject_not_enrolled"
        case userDisabled = "user_disabled"
        case clientNotAllowed = "client_not_allowed"
    }

    let reason: Reason
    let message: String

    init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    /// KeywardJOSE's verdict, under the host-token reasons.
    init(_ error: JOSEError) {
        let reason: Reason = switch error.code {
        case .tooLarge: .tooLarge
        case .duplicateMember: .duplicateMember
        case .typeMismatch: .typeMismatch
        case .algorithmNotAllowed, .missingAlgorithm: .algorithmNotAllowed
        case .algorithmKeyMismatch: .keyMismatch
        case .unknownKeyID, .missingKeyID: .unknownKey
        case .badSignature: .badSignature
        case .missingClaim: .missingClaim
        case .invalidClaim: .invalidClaim
        case .issuerMismatch: .unknownIssuer
        case .audienceMismatch: .audienceMismatch
        case .expired: .expired
        case .notYetValid: .notYetValid
        case .issuedInFuture: .issuedInFuture
        case .lifetimeTooLong: .lifetimeTooLong
        case .malformed, .badBase64URL, .badJSON, .unsupportedCritical, .unsupportedB64, .unsupportedKey, .weakKey,
            .privateKeyMaterial, .invalidKey:
            .malformed
        // JWE codes: a host token is a JWS, and KeywardJOSE decrypts no JWE on its path.
        case .missingEncryption, .encryptionNotAllowed, .unsupportedCompression, .keyUnwrapFailed, .decryptionFailed:
            .malformed
        }
        self.init(reason, error.message)
    }

    /// The token endpoint's answer: `invalid_grant` (RFC 7523 §3.1), `unauthorized_client` for a client the issuer
    /// does not serve, or 503 when the issuer's keys or the database cannot be had.
    var oauthFailure: OAuthFailure {
        if reason == .clientNotAllowed {
            return OAuthFailure(status: 400, code: .unauthorizedClient, description: "host token: " + message, reason: reason.rawValue)
        }
        if reason == .keysUnavailable || reason == .storeUnavailable {
            return OAuthFailure(status: 503, code: .unavailable, description: "host token: " + message, reason: reason.rawValue)
        }
        return OAuthFailure(status: 400, code: .invalidGrant, description: "host token: " + message, reason: reason.rawValue)
    }
}
