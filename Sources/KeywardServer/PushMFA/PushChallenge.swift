// One push-MFA enrollment or login challenge, with its kind, status and expiry.
import Foundation

/// One enrollment or login challenge. Status strings and kinds are the wire values of the original.
public struct PushChallenge: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case enrollment = "ENROLLMENT"
        case authentication = "AUTHENTICATION"
    }

    public enum Status: String, Sendable {
        case pending = "PENDING"
        case approved = "APPROVED"
        case denied = "DENIED"
        case expired = "EXPIRED"
        case userLockedOut = "USER_LOCKED_OUT"
    }

    public var id: String
    public var realm: String
    public var userId: String
    public var kind: Kind
    public var status: Status
    /// Enrollment only: 32 random bytes, standard base64 without padding, compared byte for byte.
    public var nonce: String
    /// Login only: the credential (internal id) this challenge is bound to; nil means any of the user's devices.
    public var credentialId: String?
    /// The OAuth client the browser is logging into.
    public var clientId: String?
    /// The browser session that asked for it; resend replaces challenges of the same session.
    public var sessionId: String?
    /// SHA-256 (base64url) of the SSE watch secret; the secret itself is only ever in the browser's page.
    public var watchSecretHash: String
    public var userVerification: UserVerification
    /// Wrong user-verification answers so far; the third resolves the challenge DENIED.
    public var userVerificationFailures: Int
    public var createdAt: Date
    public var expiresAt: Date
    public var resolvedAt: Date?

    public init(
        id: String, realm: String, userId: String, kind: Kind, status: Status = .pending, nonce: String = "",
        credentialId: String? = nil, clientId: String? = nil, sessionId: String? = nil, watchSecretHash: String,
        userVerification: UserVerification = .none, userVerificationFailures: Int = 0,
        createdAt: Date, expiresAt: Date, resolvedAt: Date? = nil
    ) {
        self.id = id
        self.realm = realm
        self.userId = userId
        self.kind = kind
        self.status = status
        self.nonce = nonce
        self.credentialId = credentialId
        self.clientId = clientId
        self.sessionId = sessionId
        self.watchSecretHash = watchSecretHash
        self.userVerification = userVerification
        self.userVerificationFailures = userVerificationFailures
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.resolvedAt = resolvedAt
    }

    /// The status a reader must see: a PENDING challenge past its expiry is EXPIRED even before anyone writes it.
    public func effectiveStatus(at now: Date) -> Status {
        status == .pending && now >= expiresAt ? .expired : status
    }
}
