// The OAuth core's stored records: realm signing keys, sealed, and OAuth clients.
import Foundation
import KeywardHTTPInput

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
    /// Where the authorization endpoint may send the person back, each checked when registered (`RedirectURI`).
    public var redirectURIs: [RedirectURI]
    /// Where RP-initiated logout may send the person back.
    public var postLogoutRedirectURIs: [RedirectURI]
    /// The realm's own app: the person is not asked to consent.
    public var firstParty: Bool
    /// Authorization requests only through a pushed request (RFC 9126 §6).
    public var requirePAR: Bool
    /// May use the broker: a public client's app opens the relay, returning to one of its redirect URIs; a
    /// confidential client stores hand-offs of its own.
    public var broker: Bool
    /// What it may do over the admin API (issue 33); only a confidential client that requires DPoP holds any.
    public var adminScopes: Set<AdminScope> = []
    public var createdAt: Date

    public init(
        realm: String, clientId: String, secretSalt: [UInt8], secretHash: [UInt8], requireDPoP: Bool,
        scope: String, isPublic: Bool = false, redirects: ClientRedirects = ClientRedirects(), createdAt: Date
    ) {
        self.isPublic = isPublic
        self.redirectURIs = redirects.redirectURIs
        self.postLogoutRedirectURIs = redirects.postLogoutRedirectURIs
        self.firstParty = redirects.firstParty
        self.requirePAR = redirects.requirePAR
        self.broker = redirects.broker
        self.realm = realm
        self.clientId = clientId
        self.secretSalt = secretSalt
        self.secretHash = secretHash
        self.requireDPoP = requireDPoP
        self.scope = scope
        self.createdAt = createdAt
    }
}

extension OAuthClient {
    /// The registration a request's `redirect_uri` names, if any (byte for byte; a loopback URI's port aside).
    public func redirectURI(matching requested: String) -> RedirectURI? {
        redirectURIs.first { $0.matches(requested) }
    }

    /// What the client registered for the authorization endpoint.
    public var redirects: ClientRedirects {
        ClientRedirects(
            redirectURIs: redirectURIs, postLogoutRedirectURIs: postLogoutRedirectURIs, firstParty: firstParty, requirePAR: requirePAR, broker: broker
        )
    }
}

/// What a client registers for the authorization endpoint (`keyward clients create --redirect-uri …`).
public struct ClientRedirects: Sendable, Equatable {
    public static let maxURIs = 20

    public var redirectURIs: [RedirectURI]
    public var postLogoutRedirectURIs: [RedirectURI]
    public var firstParty: Bool
    public var requirePAR: Bool
    public var broker: Bool

    public init(
        redirectURIs: [RedirectURI] = [], postLogoutRedirectURIs: [RedirectURI] = [], firstParty: Bool = false, requirePAR: Bool = false,
        broker: Bool = false
    ) {
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.firstParty = firstParty
        self.requirePAR = requirePAR
        self.broker = broker
    }

    /// From what an operator typed: each URI checked (`RedirectURI`), repeats dropped, at most `maxURIs` of each.
    public init(redirectURIs: [String], postLogoutRedirectURIs: [String], firstParty: Bool, requirePAR: Bool, broker: Bool = false) throws(ClientError) {
        func checked(_ texts: [String], _ setting: String) throws(ClientError) -> [RedirectURI] {
            var seen = Set<String>()
            var uris: [RedirectURI] = []
            for text in texts where seen.insert(text).inserted {
                do throws(RedirectURIError) {
                    uris.append(try RedirectURI(registering: text))
                } catch {
                    throw ClientError.invalidRedirectURI(setting: setting, error)
                }
            }
            guard uris.count <= Self.maxURIs else { throw ClientError.tooManyRedirectURIs(setting: setting, uris.count) }
            return uris
        }
        self.init(
            redirectURIs: try checked(redirectURIs, "--redirect-uri"), postLogoutRedirectURIs: try checked(postLogoutRedirectURIs, "--post-logout-redirect-uri"),
            firstParty: firstParty, requirePAR: requirePAR, broker: broker
        )
    }
}
