// A user's identity at another issuer or identity provider, and the store that links identities to users.
import Foundation

/// A user's identity at another issuer: a host-token issuer that enrolled them (host-signed tokens), or an
/// identity provider they signed in with. (realm, issuer, subject) names one Keyward user.
public struct ExternalIdentity: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// Enrolled by the operator for a registered host-token issuer; `subject` is the enterprise id.
        case hostIssuer = "host-issuer"
        /// Linked through a sign-in with an identity provider.
        case provider
    }

    public var realm: String
    public var userId: String
    public var kind: Kind
    /// The issuer's `iss`, exactly as its tokens carry it.
    public var issuer: String
    /// The issuer's `sub` for the user.
    public var subject: String
    public var createdAt: Date
    /// What a provider said about the person at the last sign-in (nil for host-token enrolments).
    public var details: ProviderDetails?

    /// A provider identity's profile as its last id_token gave it.
    public struct ProviderDetails: Sendable, Equatable {
        /// The alias of the provider the person signed in through.
        public var alias: String
        public var email: String?
        public var emailVerified: Bool?
        public var name: String?
        public var lastLoginAt: Date?
        /// Sign in with Apple: the refresh token Apple gave, sealed under the master key (`AppleTokenRevocation`),
        /// which deleting the account revokes. A sign-in without one keeps the stored one.
        public var revocationToken: String?

        public init(alias: String, email: String?, emailVerified: Bool?, name: String?, lastLoginAt: Date? = nil, revocationToken: String? = nil) {
            self.alias = alias
            self.email = email
            self.emailVerified = emailVerified
            self.name = name
            self.lastLoginAt = lastLoginAt
            self.revocationToken = revocationToken
        }
    }

    public init(realm: String, userId: String, kind: Kind, issuer: String, subject: String, createdAt: Date, details: ProviderDetails? = nil) {
        self.realm = realm
        self.userId = userId
        self.kind = kind
        self.issuer = issuer
        self.subject = subject
        self.createdAt = createdAt
        self.details = details
    }
}

public protocol ExternalIdentityStore: Sendable {
    /// Inserts the identity; throws `.conflict` when (realm, issuer, subject) is linked already.
    func createIdentity(_ identity: ExternalIdentity) async throws
    /// Creates the user and links the identity in one transaction: both or neither.
    func createUser(_ user: User, with identity: ExternalIdentity) async throws
    /// The identity and its user, in one query.
    func user(realm: String, issuer: String, subject: String) async throws -> (identity: ExternalIdentity, user: User)?
    func identities(realm: String, userId: String) async throws -> [ExternalIdentity]
    func identities(realm: String, issuer: String) async throws -> [ExternalIdentity]
    /// The identities whose (lower-case) e-mail address is `email` and counts as verified: stored verified, through
    /// a provider that exists and is trusted for e-mail now. Each with its user.
    func verifiedHolders(realm: String, email: String) async throws -> [(identity: ExternalIdentity, user: User)]
    /// Stores what the provider said at a sign-in, and when it was, on the identity and its user, and returns the
    /// user; nil when no user has the identity (a first sign-in).
    @discardableResult
    func recordSignIn(realm: String, issuer: String, subject: String, details: ExternalIdentity.ProviderDetails, at: Date) async throws -> User?
    /// Unlinks every identity of `kind` at `issuer`; returns how many there were.
    func deleteIdentities(realm: String, issuer: String, kind: ExternalIdentity.Kind) async throws -> Int
    /// Unlinks one provider identity of the user, unless it is their last way to sign in (no password and no other
    /// identity at a provider the realm still has). Decided with the user's row locked, so two unlinks at once
    /// cannot both pass.
    /// How many of the user's provider identities sign them in: those at a provider the realm still has.
    func workingProviderIdentities(realm: String, userId: String) async throws -> Int
    /// `waysInElsewhere`: the ways in other parts hold for the user (passkeys), read just before.
    func unlinkProviderIdentity(realm: String, userId: String, issuer: String, subject: String, waysInElsewhere: Int) async throws -> ProviderUnlink
}

public enum ProviderUnlink: Sendable, Equatable {
    case unlinked
    /// The identity is the user's last way to sign in; it stays.
    case lastWayIn
    /// The user has no such provider identity.
    case notFound
}
