// A customer's auth provider whose tokens a realm accepts: its keys and rules, and the store that keeps them.
import Foundation
import KeywardJOSE

/// A customer's auth provider whose JWTs a realm accepts (host-signed tokens): its `iss`, where its keys come
/// from, and the rules its tokens must meet. The defaults are the strict ones; an operator relaxes them per issuer.
public struct HostIssuer: Sendable, Equatable {
    public enum KeySource: Sendable, Equatable {
        /// https, or http on a loopback address only; fetched and cached by `HostIssuerKeys`.
        case jwksURL(String)
        /// One or more PEM certificates, concatenated; their validity periods are checked at every use.
        case pemCertificates(String)
    }

    public static let defaultAlgorithms: [JWSAlgorithm] = [.rs256]
    /// The source asks host apps for short-lived tokens; 15 minutes is its own bound.
    public static let defaultMaxLifetime = 900
    public static let defaultLeeway = 30

    public var realm: String
    /// The `iss` its tokens carry, compared exactly.
    public var issuer: String
    public var keySource: KeySource
    public var algorithms: [JWSAlgorithm]
    /// Upper bound in seconds on `exp − (nbf ?? iat)`.
    public var maxLifetime: Int
    /// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds.
    public var leeway: Int
    /// The `aud` its tokens must name; nil: the realm's issuer URL.
    public var audience: String?
    public var requireJTI: Bool
    /// Exchanges without a DPoP proof (bearer tokens) are refused unless this is set.
    public var allowBearer: Bool
    /// The clients its tokens may be exchanged by; nil: any client of the realm.
    public var clients: [String]?
    public var createdAt: Date

    public init(
        realm: String, issuer: String, keySource: KeySource, algorithms: [JWSAlgorithm] = Self.defaultAlgorithms,
        maxLifetime: Int = Self.defaultMaxLifetime, leeway: Int = Self.defaultLeeway, audience: String? = nil,
        requireJTI: Bool = true, allowBearer: Bool = false, clients: [String]? = nil, createdAt: Date
    ) {
        self.clients = clients
        self.realm = realm
        self.issuer = issuer
        self.keySource = keySource
        self.algorithms = algorithms
        self.maxLifetime = maxLifetime
        self.leeway = leeway
        self.audience = audience
        self.requireJTI = requireJTI
        self.allowBearer = allowBearer
        self.createdAt = createdAt
    }
}

public protocol HostIssuerStore: Sendable {
    /// Inserts an issuer; throws `.conflict` when (realm, issuer) exists and `.missingParent` without the realm.
    func createIssuer(_ issuer: HostIssuer) async throws
    func issuer(realm: String, issuer: String) async throws -> HostIssuer?
    func listIssuers(realm: String) async throws -> [HostIssuer]
    /// Replaces every setting of (issuer.realm, issuer.issuer); throws `.notFound` when absent.
    func updateIssuer(_ issuer: HostIssuer) async throws
    /// Throws `.notFound` when absent.
    func deleteIssuer(realm: String, issuer: String) async throws
}
