// Administering a realm's identity providers: adding with every setting checked, listing, removing.
import Foundation

/// The provider registry's administration (`keyward providers …`): adding a provider after checking every setting
/// (its client secret sealed under the master key), listing and removing. Read from the database on every sign-in,
/// so a change applies at once on every node.
public final class IdentityProviderService: Sendable {
    /// What `add` checks and stores; nil fields take the kind's defaults.
    public struct Registration: Sendable {
        public var realm: String
        public var alias: String
        public var kind: IdentityProvider.Kind
        public var issuer: String?
        public var clientId: String
        public var clientSecret: String?
        public var scopes: [String]?
        public var displayName: String?
        public var trustVerifiedEmail: Bool
        public var hostedDomain: String?
        /// The claim new users' usernames come from (`usernameClaims`); nil keeps generated names.
        public var usernameClaim: String?
        /// Apple and Facebook: endpoints instead of the preset ones (nil keeps each preset).
        public var authorizationEndpoint: String?
        public var tokenEndpoint: String?
        public var jwksURI: String?
        public var userinfoEndpoint: String?
        /// Apple: the team, the key id and the .p8 file's PEM text the client secret is signed with.
        public var appleTeamId: String?
        public var appleKeyId: String?
        public var applePrivateKeyPEM: String?

        public init(
            realm: String, alias: String, kind: IdentityProvider.Kind, issuer: String? = nil, clientId: String, clientSecret: String? = nil,
            scopes: [String]? = nil, displayName: String? = nil, trustVerifiedEmail: Bool = false, hostedDomain: String? = nil, usernameClaim: String? = nil,
            authorizationEndpoint: String? = nil, tokenEndpoint: String? = nil, jwksURI: String? = nil, userinfoEndpoint: String? = nil,
            appleTeamId: String? = nil, appleKeyId: String? = nil, applePrivateKeyPEM: String? = nil
        ) {
            self.realm = realm
            self.alias = alias
            self.kind = kind
            self.issuer = issuer
            self.clientId = clientId
            self.clientSecret = clientSecret
            self.scopes = scopes
            self.displayName = displayName
            self.trustVerifiedEmail = trustVerifiedEmail
            self.hostedDomain = hostedDomain
            self.usernameClaim = usernameClaim
            self.authorizationEndpoint = authorizationEndpoint
            self.tokenEndpoint = tokenEndpoint
            self.jwksURI = jwksURI
            self.userinfoEndpoint = userinfoEndpoint
            self.appleTeamId = appleTeamId
            self.appleKeyId = appleKeyId
            self.applePrivateKeyPEM = applePrivateKeyPEM
        }
    }

    /// Google's issuer; its id_tokens may also carry it without the scheme (`ProviderIDToken`).
    public static let googleIssuer = "https://accounts.google.com"
    /// `/v1/auth/{alias}` starts a provider's flow; these names are the session routes beside it.
    static let reservedAliases: Set<String> = ["session", "logout"]
    public static let defaultScopes = ["openid", "email", "profile"]
    public static let appleIssuer = "https://appleid.apple.com"
    /// Facebook Login issues no id_token, so no issuer: its identities are filed under this fixed name, keyed
    /// (issuer, app-scoped user id) like every other provider's.
    public static let facebookIssuer = "https://www.facebook.com"

    private let store: any IdentityProviderStore
    let masterKey: MasterKey
    private let audit: AuditLog
    private let clock: any KeywardClock

    init(store: any IdentityProviderStore, masterKey: MasterKey, audit: AuditLog, clock: any KeywardClock) {
        self.store = store
        self.masterKey = masterKey
        self.audit = audit
        self.clock = clock
    }

    public func add(_ registration: Registration) async throws -> IdentityProvider {
        let provider = try validated(registration)
        do {
            try await store.createProvider(provider)
        } catch StoreError.conflict {
            throw IdentityProviderError.exists(provider.alias)
        }
        await audit.record(.identityProviderAdded, realm: provider.realm, userId: nil, details: [
            "alias": provider.alias, "kind": provider.kind.rawValue, "issuer": provider.issuer,
        ])
        return provider
    }

    public func list(realm: String) async throws -> [IdentityProvider] { try await store.listProviders(realm: realm) }

    public func provider(realm: String, alias: String) async throws -> IdentityProvider? { try await store.provider(realm: realm, alias: alias) }

    /// Removes the provider; the identities linked through it stay with their users (an operator may add it again).
    public func remove(realm: String, alias: String) async throws {
        guard try await store.removeProvider(realm: realm, alias: alias) else { throw IdentityProviderError.notFound(alias) }
        await audit.record(.identityProviderRemoved, realm: realm, userId: nil, details: ["alias": alias])
    }

    /// The provider's client secret, opened; nil when it has none.
    func clientSecret(of provider: IdentityProvider) throws -> String? {
        try provider.sealedClientSecret.map {
            String(decoding: try masterKey.open($0, context: IdentityProvider.secretContext(realm: provider.realm, alias: provider.alias)), as: UTF8.self)
        }
    }

    private func validated(_ registration: Registration) throws -> IdentityProvider {
        let alias = registration.alias
        guard (1...32).contains(alias.utf8.count), alias.utf8.allSatisfy(Self.isAliasByte), alias.first != "-" else {
            throw IdentityProviderError.invalidSetting("alias", "1-32 lower-case letters, digits or '-', not starting with '-' (it appears in URLs)")
        }
        guard !Self.reservedAliases.contains(alias) else {
            throw IdentityProviderError.invalidSetting("alias", "'\(alias)' is taken by a route of its own (/v1/auth/\(alias)); choose another")
        }
        let issuer: String
        switch registration.kind {
        case .oidc:
            guard let given = registration.issuer else { throw IdentityProviderError.invalidSetting("issuer", "an oidc provider needs --issuer") }
            issuer = given
        case .google:
            issuer = registration.issuer ?? Self.googleIssuer
        case .apple:
            issuer = registration.issuer ?? Self.appleIssuer
        case .facebook:
            guard registration.issuer == nil else {
                throw IdentityProviderError.invalidSetting("issuer", "facebook has no issuer (no id_token); its identities are filed under \(Self.facebookIssuer)")
            }
            issuer = Self.facebookIssuer
        }
        if let problem = OutboundURL.problem(issuer) { throw IdentityProviderError.invalidSetting("issuer", problem) }
        let clientId = registration.clientId
        guard (1...512).contains(clientId.utf8.count), clientId.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw IdentityProviderError.invalidSetting("client-id", "1-512 printable ASCII characters without spaces")
        }
        switch registration.kind {
        case .google, .facebook:
            if registration.clientSecret == nil {
                throw IdentityProviderError.invalidSetting("client-secret", "\(registration.kind.rawValue) web clients authenticate with their client (app) secret")
            }
        case .apple:
            if registration.clientSecret != nil {
                throw IdentityProviderError.invalidSetting("client-secret", "apple's client secret is made from --private-key-file; give no secret")
            }
        case .oidc:
            break
        }
        if let secret = registration.clientSecret {
            guard (1...1024).contains(secret.utf8.count), !secret.contains(where: \.isNewline) else {
                throw IdentityProviderError.invalidSetting("client-secret", "1-1024 characters on one line")
            }
        }
        let scopes = try Self.validatedScopes(registration.scopes, kind: registration.kind)
        let displayName = registration.displayName ?? Self.defaultDisplayName(registration.kind) ?? alias
        guard (1...64).contains(displayName.count), !displayName.contains(where: { $0.isNewline }) else {
            throw IdentityProviderError.invalidSetting("display-name", "1-64 characters on one line")
        }
        if let domain = registration.hostedDomain {
            guard registration.kind == .google else { throw IdentityProviderError.invalidSetting("hosted-domain", "only for google providers") }
            guard (1...253).contains(domain.utf8.count), domain.utf8.allSatisfy({ Self.isAliasByte($0) || $0 == UInt8(ascii: ".") }) else {
                throw IdentityProviderError.invalidSetting("hosted-domain", "a lower-case domain name, e.g. example.com")
            }
        }
        if let claim = registration.usernameClaim {
            let allowed = Self.usernameClaims(registration.kind)
            guard allowed.contains(claim) else {
                throw IdentityProviderError.invalidSetting(
                    "username-claim", allowed.isEmpty ? "\(registration.kind.rawValue) providers give no claim to name users by"
                        : "\(registration.kind.rawValue) providers offer \(allowed.sorted().joined(separator: ", "))"
                )
            }
        }
        let endpoints = try Self.validatedEndpoints(registration)
        let appleKey = try validatedAppleKey(registration)
        let sealed = try registration.clientSecret.map {
            try masterKey.seal(Array($0.utf8), context: IdentityProvider.secretContext(realm: registration.realm, alias: alias))
        }
        return IdentityProvider(
            realm: registration.realm, alias: alias, kind: registration.kind, issuer: issuer, clientId: clientId, sealedClientSecret: sealed,
            scopes: scopes, displayName: displayName, trustVerifiedEmail: registration.trustVerifiedEmail,
            hostedDomain: registration.hostedDomain, usernameClaim: registration.usernameClaim, endpoints: endpoints, appleKey: appleKey,
            createdAt: clock.now()
        )
    }

    /// The claims a kind of provider can name new users by. Apple gives no handle, only the address (used only
    /// when verified and the provider trusted for it); Facebook's addresses are never verified, so none.
    static func usernameClaims(_ kind: IdentityProvider.Kind) -> Set<String> {
        switch kind {
        case .oidc, .google: ["preferred_username", "email", "nickname"]
        case .apple: ["email"]
        case .facebook: []
        }
    }

    static func isAliasByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
    }
}

public enum IdentityProviderError: Error, CustomStringConvertible, Equatable {
    case invalidSetting(String, String)
    case exists(String)
    case notFound(String)

    public var description: String {
        switch self {
        case .invalidSetting(let setting, let problem): "\(setting): \(problem)"
        case .exists(let alias): "provider '\(alias)' exists already in this realm"
        case .notFound(let alias): "no provider '\(alias)' in this realm"
        }
    }
}
