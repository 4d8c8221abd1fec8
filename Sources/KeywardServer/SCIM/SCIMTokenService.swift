// Making, listing, revoking and checking a realm's SCIM tokens.
import Crypto
import Foundation
import KeywardJOSE

/// A realm's directory tokens. A token is `kwscim_<id>.<secret>`: the id (72 random bits) finds the row, the
/// SHA-256 of the whole token must match it, compared in constant time; the 256-bit secret makes the hash safe to
/// keep without a slow KDF. Revoking deletes the row, so the next request with it is refused.
public struct SCIMTokenService: Sendable {
    static let prefix = "kwscim_"
    static let maxNameLength = 100

    let store: any SCIMTokenStore
    let audit: AuditLog
    let clock: any KeywardClock

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case invalidName(String)
        case notFound(String)

        public var description: String {
            switch self {
            case .invalidName(let why): "invalid token name: \(why)"
            case .notFound(let what): what
            }
        }
    }

    /// Makes a token named `name` for `realm`; the token is in the answer only.
    public func create(realm: String, name: String) async throws -> (token: SCIMToken, secret: String) {
        guard !name.isEmpty, name.count <= Self.maxNameLength, name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
            throw Failure.invalidName("1 to \(Self.maxNameLength) characters without control characters")
        }
        let id = Base64URL.encode(SecureRandom.bytes(9))
        let secret = Self.prefix + id + "." + Base64URL.encode(SecureRandom.bytes(32))
        let token = SCIMToken(realm: realm, id: id, name: name, tokenHash: Self.digest(secret), createdAt: StorageTime.asStored(clock.now()))
        try await store.createToken(token)
        await audit.record(.scimTokenCreated, realm: realm, userId: nil, details: ["tokenId": id, "name": name])
        return (token, secret)
    }

    public func tokens(realm: String) async throws -> [SCIMToken] {
        try await store.tokens(realm: realm)
    }

    /// Revokes the token with this id or name.
    public func revoke(realm: String, idOrName: String) async throws {
        guard try await store.deleteToken(realm: realm, idOrName: idOrName) else {
            throw Failure.notFound("realm '\(realm)' has no SCIM token with id or name '\(idOrName)'")
        }
        await audit.record(.scimTokenRevoked, realm: realm, userId: nil, details: ["token": idOrName])
    }

    /// The token `presented` is, when it is one of `realm`'s; nil for anything else (another realm's, revoked, made up).
    func authenticate(realm: String, presented: String) async throws -> SCIMToken? {
        guard presented.hasPrefix(Self.prefix), presented.utf8.count < 200 else { return nil }
        let rest = presented.dropFirst(Self.prefix.count)
        guard let dot = rest.firstIndex(of: "."), let token = try await store.token(realm: realm, id: String(rest[..<dot])) else { return nil }
        return ConstantTime.equal(Array(Self.digest(presented).utf8), Array(token.tokenHash.utf8)) ? token : nil
    }

    static func digest(_ token: String) -> String {
        Base64URL.encode(SHA256.hash(data: Array(token.utf8)))
    }
}
