// The OAuth core's stored records: realm signing keys, sealed, and OAuth clients.
import Foundation

/// One realm signing key as persisted. The private key is sealed (AES-GCM under the master key)
/// before it reaches the store; the store never sees plaintext key material.
public struct StoredSigningKey: Sendable, Equatable {
    public enum Status: String, Sendable { case active, retired }

    public var realm: String
    public var kid: String
    public var algorithm: String
    /// The public JWK as a JSON object string.
    public var publicJWK: String
    public var sealedPrivateKey: [UInt8]
    public var status: Status
    public var createdAt: Date
    /// For retired keys: the key stays in the JWKS until this instant (when tokens it signed have expired).
    public var publishUntil: Date?

    public init(
        realm: String, kid: String, algorithm: String, publicJWK: String, sealedPrivateKey: [UInt8],
        status: Status, createdAt: Date, publishUntil: Date? = nil
    ) {
        self.realm = realm
        self.kid = kid
        self.algorithm = algorithm
        self.publicJWK = publicJWK
        self.sealedPrivateKey = sealedPrivateKey
        self.status = status
        self.createdAt = createdAt
        self.publishUntil = publishUntil
    }
}

/// An OAuth client of a realm (RFC 6749 §2.1). A confidential client's secret is stored as a salted SHA-256
/// digest and compared in constant time; a public client (an app) has none and may use only grants whose own
/// credential proves the caller (the jwt-bearer grant's host token), never client_credentials.
public struct OAuthClient: Sendable, Equatable {
    public var realm: String
    public var clientId: String
    public var secretSalt: [UInt8]
    public var secretHash: [UInt8]
    /// When true, the token endpoint refuses requests without a valid DPoP proof.
    public var requireDPoP: Bool
    /// Space-separated scopes its tokens may carry.
    public var scope: String
    /// No secret (empty salt and digest); authenticates no request by itself.
    public var isPublic: Bool
    public var createdAt: Date

    public init(
        realm: String, clientId: String, secretSalt: [UInt8], secretHash: [UInt8], requireDPoP: Bool,
        scope: String, isPublic: Bool = false, createdAt: Date
    ) {
        self.isPublic = isPublic
        self.realm = realm
        self.clientId = clientId
        self.secretSalt = secretSalt
        self.secretHash = secretHash
        self.requireDPoP = requireDPoP
        self.scope = scope
        self.createdAt = createdAt
    }
}
