// An identity provider a realm's people sign in with: kind, endpoints, client, rules, and its store.
import Foundation

/// An identity provider a realm's people sign in with: where its endpoints are, the client Keyward is registered
/// as there, and the realm's rules for its identities. Secrets stay sealed under the master key (`sealedClientSecret`).
public struct IdentityProvider: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Any OpenID Connect provider, configured from its discovery document.
        case oidc
        /// Google's OpenID Connect, with its hosted-domain (`hd`) restriction.
        case google
        /// Sign in with Apple: fixed endpoints (no discovery in Apple's web flow), `form_post` callbacks, a client
        /// secret that is an ES256 JWT made with the team's key.
        case apple
        /// Facebook Login: OAuth 2 without an id_token; the user token is checked with Graph's `debug_token`.
        case facebook
    }

    /// The endpoints of a provider without a discovery document (Apple, Facebook): the kind's preset, or what the
    /// operator gave to point it elsewhere (tests point them at local doubles).
    public struct Endpoints: Sendable, Equatable {
        public var authorization: String
        public var token: String
        /// Apple's JWK Set; nil for Facebook, which signs nothing Keyward verifies.
        public var jwks: String?
        /// Facebook's Graph `/me`; nil for Apple, whose id_token says all there is.
        public var userinfo: String?

        public init(authorization: String, token: String, jwks: String? = nil, userinfo: String? = nil) {
            self.authorization = authorization
            self.token = token
            self.jwks = jwks
            self.userinfo = userinfo
        }

        /// Apple's `/auth/revoke` (account deletion, App Store rule 5.1.1(v)) sits beside its `/auth/token`: derived
        /// rather than stored, so migration 11's columns suffice (validation makes sure the token URL ends in /token).
        public var appleRevocation: String { String(token.dropLast("token".count)) + "revoke" }

        /// Graph's `/debug_token` sits at the version root the token endpoint (`…/vNN.N/oauth/access_token`) is under.
        public var facebookDebugToken: String { String(token.dropLast("oauth/access_token".count)) + "debug_token" }
    }

    /// Sign in with Apple's client-secret key: the team, the key's id, and the .p8 key (PKCS#8 DER) sealed under
    /// the master key with `appleKeyContext`.
    public struct AppleKey: Sendable, Equatable {
        public var teamId: String
        public var keyId: String
        public var sealedPrivateKey: [UInt8]

        public init(teamId: String, keyId: String, sealedPrivateKey: [UInt8]) {
            self.teamId = teamId
            self.keyId = keyId
            self.sealedPrivateKey = sealedPrivateKey
        }
    }

    public var realm: String
    /// The provider's name in URLs and on the command line (`/realms/{realm}/v1/auth/{alias}`).
    public var alias: String
    public var kind: Kind
    /// The `iss` its id_tokens carry, compared exactly; its discovery document lives under it. For Facebook, which
    /// has no id_token, a fixed name (`IdentityProviderService.facebookIssuer`) its identities are filed under.
    public var issuer: String
    public var clientId: String
    /// The client secret, sealed under the master key with `secretContext`.
    public var sealedClientSecret: [UInt8]?
    public var scopes: [String]
    /// The button's label on the sign-in page.
    public var displayName: String
    /// Link a new identity to an existing account by e-mail when this provider says the address is verified.
    public var trustVerifiedEmail: Bool
    /// Whether this provider's `email_verified` counts: trusted by the operator, and never Facebook's (Graph gives no
    /// such flag).
    var trustsEmail: Bool { trustVerifiedEmail && kind != .facebook }
    /// Google: only accounts of this Workspace domain (`hd` claim).
    public var hostedDomain: String?
    /// The claim a new user's username is taken from (`IdentityProviderService.usernameClaims`); nil: generated.
    public var usernameClaim: String?
    /// Apple and Facebook only; nil for kinds configured from a discovery document.
    public var endpoints: Endpoints?
    /// Apple only.
    public var appleKey: AppleKey?
    public var createdAt: Date

    public init(
        realm: String, alias: String, kind: Kind, issuer: String, clientId: String, sealedClientSecret: [UInt8]?, scopes: [String],
        displayName: String, trustVerifiedEmail: Bool = false, hostedDomain: String? = nil, usernameClaim: String? = nil, endpoints: Endpoints? = nil,
        appleKey: AppleKey? = nil, createdAt: Date
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
        self.usernameClaim = usernameClaim
        self.endpoints = endpoints
        self.appleKey = appleKey
        self.createdAt = createdAt
    }

    /// Binds a sealed secret to its provider row: a secret copied into another row does not open.
    static func secretContext(realm: String, alias: String) -> String { "identity-provider:\(realm):\(alias):client-secret" }

    /// Binds a sealed Apple key to its provider row, like `secretContext`.
    static func appleKeyContext(realm: String, alias: String) -> String { "identity-provider:\(realm):\(alias):apple-private-key" }

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
