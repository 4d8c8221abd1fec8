// A directory's bearer token for a realm's SCIM API: what is stored of it, and the store.
import Foundation

/// A SCIM token as stored: its public id (the part of the token before the secret), the name the operator gave
/// it, and the SHA-256 of the whole token. The token itself is never stored.
public struct SCIMToken: Sendable, Equatable {
    public var realm: String
    public var id: String
    public var name: String
    /// The base64url SHA-256 of the token as presented.
    var tokenHash: String
    public var createdAt: Date
}

protocol SCIMTokenStore: Sendable {
    /// Inserts a token; throws `.conflict` when the realm has a token of that name, `.notFound` when the realm is gone.
    func createToken(_ token: SCIMToken) async throws
    func token(realm: String, id: String) async throws -> SCIMToken?
    func tokens(realm: String) async throws -> [SCIMToken]
    /// Deletes the token whose id or name is `idOrName`; false when there is none.
    func deleteToken(realm: String, idOrName: String) async throws -> Bool
}
