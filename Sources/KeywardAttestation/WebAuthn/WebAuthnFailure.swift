/// Why a WebAuthn registration or assertion was refused. The raw values are stable codes: the passkey endpoints
/// answer them as their `error`, the audit log records them, and pages and apps may match on them.
public enum WebAuthnReason: String, Sendable, Hashable, CaseIterable, Codable {
    /// Input that cannot be read: bad base64url, JSON, CBOR, authenticator data or COSE key structure, a missing
    /// member, a value out of its bounds.
    case malformed = "webauthn_malformed"
    /// `clientDataJSON.type` is not the ceremony's (`webauthn.create` for a registration, `webauthn.get` to sign in).
    case typeMismatch = "webauthn_type_mismatch"
    /// `clientDataJSON.challenge` is not the challenge this ceremony was given.
    case challengeMismatch = "webauthn_challenge_mismatch"
    /// `clientDataJSON.origin` (or `topOrigin`) is not one of the realm's allowed origins.
    case originNotAllowed = "webauthn_origin_not_allowed"
    /// The ceremony ran in a cross-origin frame, which the realm does not allow.
    case crossOrigin = "webauthn_cross_origin"
    /// The authenticator data's rpIdHash is not SHA-256 of the realm's RP ID.
    case rpIDMismatch = "webauthn_rp_id_mismatch"
    /// The authenticator did not see the user: the UP flag is clear.
    case userNotPresent = "webauthn_user_not_present"
    /// The realm asks for user verification and the UV flag is clear.
    case userNotVerified = "webauthn_user_not_verified"
    /// A COSE key of a type, curve or algorithm other than ES256 (P-256), EdDSA (Ed25519) and RS256.
    case unsupportedAlgorithm = "webauthn_unsupported_algorithm"
    /// The assertion's or the attestation's signature does not verify.
    case signatureInvalid = "webauthn_signature_invalid"
    /// A signature counter that did not increase: two authenticators may hold the same credential (§6.1.1).
    case counterNotIncreasing = "webauthn_counter_not_increasing"
    /// An attestation statement format other than `none`, `packed` and `apple`.
    case attestationFormatUnsupported = "webauthn_attestation_format_unsupported"
    /// An attestation statement that does not verify: its signature, its certificate's requirements, its nonce.
    case attestationInvalid = "webauthn_attestation_invalid"
    /// The realm asks for attestation and the statement does not lead to a trusted root (or has no chain at all).
    case attestationUntrusted = "webauthn_attestation_untrusted"
}

/// A refused WebAuthn response: the stable reason and a sentence naming the check and the values involved, for
/// logs and for the person or developer reading the error.
public struct WebAuthnFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: WebAuthnReason
    public let detail: String

    public init(_ reason: WebAuthnReason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    public var description: String { "\(reason.rawValue): \(detail)" }
}
