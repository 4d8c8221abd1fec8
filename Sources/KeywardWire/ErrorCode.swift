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
    // Authorization requests (RFC 6749 §4.1.2.1, OpenID Connect Core §3.1.2.6, RFC 9126 §2.3), as a pushed
    // request is answered.
    case unsupportedResponseType = "unsupported_response_type"
    case requestNotSupported = "request_not_supported"
    case registrationNotSupported = "registration_not_supported"
    // Resource-server codes (RFC 6750 §3.1).
    case invalidToken = "invalid_token"
    /// The token does not carry the scope the resource needs (RFC 6750 §3.1).
    case insufficientScope = "insufficient_scope"
    // Keyward's own codes.
    case notFound = "not_found"
    case realmNotFound = "realm_not_found"
    case methodNotAllowed = "method_not_allowed"
    case payloadTooLarge = "payload_too_large"
    case unsupportedMediaType = "unsupported_media_type"
    case unavailable = "unavailable"
    case internalError = "internal_error"
    /// The browser has no signed-in session for the realm.
    case notSignedIn = "not_signed_in"
    /// A state-changing browser request without the session's CSRF token.
    case csrfMismatch = "csrf_mismatch"
    /// A broker hand-off could not be taken: wrong code, nonce or key, taken already, or expired (one answer for all).
    case handoffInvalid = "handoff_invalid"
    /// The client has as many hand-offs waiting as it may.
    case handoffLimit = "handoff_limit"
    /// Too many failed attempts from this address; `Retry-After`-style wait in the message.
    case tooManyAttempts = "too_many_attempts"
    /// The realm does not offer passkeys (`keyward realms update R --passkeys optional`).
    case passkeysDisabled = "passkeys_disabled"
    /// A passkey registration or sign-in was refused; `reason` names the check (`webauthn_origin_not_allowed`, …).
    case passkeyRefused = "passkey_refused"
    /// The action needs a sign-in within the last minutes (adding a passkey): sign in again, then retry.
    case recentSignInRequired = "recent_sign_in_required"
    // Device registration and signed device requests: the upper-case taxonomy device SDKs already know.
    /// The app id is not registered in the realm.
    case notConfigured = "NOT_CONFIGURED"
    /// Not a challenge the realm issued for this app, or one already spent.
    case invalidChallenge = "INVALID_CHALLENGE"
    case challengeExpired = "CHALLENGE_EXPIRED"
    /// `public_key` is not an uncompressed P-256 point.
    case invalidPublicKey = "INVALID_PUBLIC_KEY"
    /// The proof of possession (the new key's signature over the challenge) does not verify.
    case invalidProof = "INVALID_PROOF"
    /// The attestation was checked and failed; `reason` names the check.
    case invalidAttestation = "INVALID_ATTESTATION"
    /// No attestation came and the app's policy requires one.
    case attestationUnavailable = "ATTESTATION_UNAVAILABLE"
    /// Informational, on a 200: this key was registered before; the existing device is returned.
    case alreadyRegistered = "ALREADY_REGISTERED"
    /// The key is registered already under another device id.
    case keyAlreadyRegistered = "KEY_ALREADY_REGISTERED"
    /// A concurrent registration of the same device or key finished first.
    case registrationInProgress = "REGISTRATION_IN_PROGRESS"
    /// The device id is registered with another key (a new key for it goes through key rotation).
    case deviceIdTaken = "DEVICE_ID_TAKEN"
    /// Development traffic for an app that does not allow the development bypass.
    case devModeRefused = "DEV_MODE_REFUSED"
    /// A signed request's timestamp is outside the server's window; `server_timestamp` says the server's time.
    case clockSkew = "CLOCK_SKEW"
    /// A signed request was seen before (the same signed message).
    case nonceReplay = "NONCE_REPLAY"
    /// No device with this app id and device id is registered.
    case notRegistered = "NOT_REGISTERED"
    /// The device's registration waits for an operator (its app's policy stored it as pending).
    case devicePending = "DEVICE_PENDING"
    /// An operator refused the device.
    case deviceRevoked = "DEVICE_REVOKED"
    /// The request signature is missing, malformed, or not the device key's signature over the request.
    case invalidSignature = "INVALID_SIGNATURE"
    /// The app has as many unattested devices (pending, or registered in the last hour) as the server allows.
    case tooManyRegistrations = "TOO_MANY_REGISTRATIONS"
    /// The person has as many devices approving logins as the realm allows (`pushMfa.maxDevicesPerUser`).
    case tooManyDevices = "TOO_MANY_DEVICES"
}

/// The JSON error body of Keyward's own API routes.
public struct APIErrorBody: Codable, Sendable, Equatable {
    public var error: ErrorCode
    public var message: String
    public var requestId: String?
    /// The finer rule that refused the request where one exists (an attestation check: `NONCE_MISMATCH`, …).
    public var reason: String?
    /// Unix seconds on the server, sent with `CLOCK_SKEW` so a device can correct its clock.
    public var serverTimestamp: Int64?

    public init(error: ErrorCode, message: String, requestId: String? = nil, reason: String? = nil, serverTimestamp: Int64? = nil) {
        self.error = error
        self.message = message
        self.requestId = requestId
        self.reason = reason
        self.serverTimestamp = serverTimestamp
    }

    enum CodingKeys: String, CodingKey {
        case error, message, requestId, reason
        case serverTimestamp = "server_timestamp"
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
