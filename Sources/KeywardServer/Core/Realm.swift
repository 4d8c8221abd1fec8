// A realm: an isolated namespace with its own issuer, signing keys, clients and users.
import Foundation

/// A realm: an isolated namespace with its own issuer, signing keys, clients and users.
public struct Realm: Sendable, Equatable {
    public var name: String
    public var displayName: String
    /// JWS algorithm of the realm's active signing key ("ES256" by default, "RS256" available).
    public var signingAlgorithm: String
    /// Lifetime of issued access tokens, in seconds.
    public var accessTokenLifetime: Int
    /// Demo realms log confirm tokens and show them on pages; never enable in production.
    public var demo: Bool
    public var createdAt: Date

    public init(
        name: String, displayName: String, signingAlgorithm: String = "ES256",
        accessTokenLifetime: Int = 300, demo: Bool = false, createdAt: Date
    ) {
        self.name = name
        self.displayName = displayName
        self.signingAlgorithm = signingAlgorithm
        self.accessTokenLifetime = accessTokenLifetime
        self.demo = demo
        self.createdAt = createdAt
    }
}
