import Foundation

/// An identity provider a realm's people sign in with: where its endpoints are, the client Keyward is registered
/// as there, and the realm's rules for its identities. Secrets stay sealed under the master key (`sealedClientSecret`).
public struct IdentityProvider: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Any OpenID Connect provider, configured from its discovery document.
        case oidc
        /// Google's OpenID Connect, with its hosted-domain (`hd`) restriction.
        case google
        case apple
        case facebook
    }

    public var realm: String
    /// The provider's name in URLs and on the command line (`/realms/{realm}/v1/auth/{alias}`).
    public var alias: String
    public var kind: Kind
    /// The `iss` its id_tokens carry, compared exactly; its discovery document lives under it.
    public var issuer: String
    public var clientId: String
    /// The client secret, sealed under the master key with `secretContext`.
    public var sealedClientSecret: [UInt8]?
    public var scopes: [String]
    /// The button's label on the sign-in page.
    public var displayName: String
    /// Link a new identity to an existing account by e-mail when this provider says the address is verified.
    public var trustVerifiedEmail: Bool
    /// Google: only accounts of this Workspace domain (`hd` claim).
    public var hostedDomain: String?
    public var createdAt: Date

    public init(
        realm: String, alias: String, kind: Kind, issuer: String, clientId: String, sealedClientSecret: [UInt8]?, scopes: [String],
        displayName: String, trustVerifiedEmail: Bool = false, hostedDomain: String? = nil, createdAt: Date
    ) {
        self.realm = realm
        self.alias = alias
        self.kind = kind
        self.issuer = issuer
        self.clientId = clientId
        self.sealedClientSecret = sealedClientSecret
        self.scopes = scopes
        self.displayName = displayName
        self.trustVerifiedEmail = trustVerifiedEmail
        self.hostedDomain = hostedDomain
        self.createdAt = createdAt
    }

    /// Binds a sealed secret to its provider row: a secret copied into another row does not open.
    static func secretContext(realm: String, alias: String) -> String { "identity-provider:\(realm):\(alias):client-secret" }

    /// Where the provider sends the browser back; configured at the provider as the redirect URI.
    public static func redirectURI(publicURL: String, realm: String, alias: String) -> String {
        "\(publicURL)/realms/\(realm)/v1/auth/\(alias)/callback"
    }
}

public protocol IdentityProviderStore: Sendable {
    /// `StoreError.conflict` when the alias is taken in the realm.
    func createProvider(_ provider: IdentityProvider) async throws
    func provider(realm: String, alias: String) async throws -> IdentityProvider?
    func listProviders(realm: String) async throws -> [IdentityProvider]
    /// Returns false when there was no such provider.
    func removeProvider(realm: String, alias: String) async throws -> Bool
}
