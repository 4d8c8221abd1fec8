// A realm's OAuth clients: creating confidential and public ones, looking them up, checking secrets.
import Crypto
import Foundation
import KeywardHTTPInput
import KeywardJOSE

/// OAuth clients. Secrets of confidential clients are never stored: only a salted SHA-256 digest, which is enough
/// for secrets with ≥128 bits of entropy (the ones Keyward generates); comparison is constant-time. Public clients
/// (apps, which cannot keep a secret) have none.
public final class ClientService: Sendable {
    private let store: any ClientStore
    private let clock: any KeywardClock
    /// Public clients by realm and id: looked up on every host-token exchange, and they carry no secret to check.
    private let publicClients = ShortLivedCache<String, OAuthClient>(lifetime: 5)

    public init(store: any ClientStore, clock: any KeywardClock) {
        self.store = store
        self.clock = clock
    }

    /// Creates a client. Returns the client and its secret, which is shown once and not recoverable.
    public func createClient(
        realm: String, clientId: String, secret: String? = nil, requireDPoP: Bool = true, scope: String = "", redirects: ClientRedirects = ClientRedirects(),
        adminScopes: Set<AdminScope> = [], grantor: Set<AdminScope>? = nil
    ) async throws -> (client: OAuthClient, secret: String) {
        // A client that makes clients (the admin API; `grantor` is what it holds) can make none stronger than itself.
        if let grantor, let beyond = adminScopes.subtracting(grantor).sorted().first { throw ClientError.adminScopeNotHeld(beyond.rawValue) }
        guard Self.isValidClientId(clientId) else { throw ClientError.invalidClientId(clientId) }
        try Self.checkScope(scope)
        // An admin token that leaks without its key must be worth nothing (RFC 9449 §1).
        guard adminScopes.isEmpty || requireDPoP else { throw ClientError.adminScopesNeedDPoP }
        let secret = secret ?? Base64URL.encode(SecureRandom.bytes(32))
        guard secret.utf8.count >= 8, secret.utf8.count <= 512 else { throw ClientError.invalidSecret }
        let salt = SecureRandom.bytes(16)
        var client = OAuthClient(
            realm: realm, clientId: clientId, secretSalt: salt, secretHash: Self.digest(secret: secret, salt: salt),
            requireDPoP: requireDPoP, scope: scope, redirects: redirects, createdAt: clock.now()
        )
        client.adminScopes = adminScopes
        do {
            try await store.createClient(client)
        } catch StoreError.conflict {
            throw ClientError.exists(clientId)
        }
        return (client, secret)
    }

    /// A public client: no secret; it can use only grants whose own credential identifies the caller (the jwt-bearer
    /// grant's host token).
    public func createPublicClient(
        realm: String, clientId: String, requireDPoP: Bool = true, scope: String = "", redirects: ClientRedirects = ClientRedirects()
    ) async throws -> OAuthClient {
        guard Self.isValidClientId(clientId) else { throw ClientError.invalidClientId(clientId) }
        try Self.checkScope(scope)
        // The relay returns only to a registered address: a broker app without one could never be answered.
        guard !redirects.broker || !redirects.redirectURIs.isEmpty else { throw ClientError.brokerWithoutReturnURL }
        let client = OAuthClient(
            realm: realm, clientId: clientId, secretSalt: [], secretHash: [], requireDPoP: requireDPoP, scope: scope, isPublic: true,
            redirects: redirects, createdAt: clock.now()
        )
        do {
            try await store.createClient(client)
        } catch StoreError.conflict {
            throw ClientError.exists(clientId)
        }
        return client
    }

    /// A client by id alone, for a public client naming itself; no authentication. Public clients are cached for a
    /// few seconds (a deleted one is refused everywhere within them).
    public func client(realm: String, clientId: String) async throws -> OAuthClient? {
        let key = realm + "\u{0}" + clientId
        let now = clock.now()
        if let cached = publicClients.value(for: key, now: now) { return cached }
        let client = try await store.client(realm: realm, clientId: clientId)
        if let client, client.isPublic { publicClients.store(client, for: key, now: now) }
        return client
    }

    /// The client when `secret` is its secret; nil otherwise (always for a public client). Unknown clients cost the same digest as known
    /// ones, so response time does not reveal which client ids exist.
    public func authenticate(realm: String, clientId: String, secret: String) async throws -> OAuthClient? {
        let client = try await store.client(realm: realm, clientId: clientId)
        let salt = client?.secretSalt ?? Self.decoySalt
        let candidate = Self.digest(secret: secret, salt: salt)
        guard let client, !client.isPublic else { return nil }
        return ConstantTime.equal(candidate, client.secretHash) ? client : nil
    }

    public func listClients(realm: String) async throws -> [OAuthClient] { try await store.listClients(realm: realm) }

    public func deleteClient(realm: String, clientId: String) async throws {
        publicClients.removeAll()
        do {
            try await store.deleteClient(realm: realm, clientId: clientId)
        } catch StoreError.notFound {
            throw ClientError.notFound(clientId)
        }
    }

    static func digest(secret: String, salt: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: salt)
        hasher.update(data: Array(secret.utf8))
        return Array(hasher.finalize())
    }

    private static let decoySalt = SecureRandom.bytes(16)

    /// Ordinary scopes: space-separated visible ASCII, none of them an admin scope's name (only `--admin-scope` grants
    /// those, and only to a confidential client).
    static func checkScope(_ scope: String) throws(ClientError) {
        guard scope.utf8.count <= 1024, scope.utf8.allSatisfy({ (0x21...0x7E).contains($0) || $0 == 0x20 }) else { throw ClientError.invalidScope }
        if let reserved = scope.split(separator: " ").first(where: { $0.hasPrefix(AdminScope.tokenPrefix) }) {
            throw ClientError.reservedScope(String(reserved.prefix(64)))
        }
    }

    static func isValidClientId(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count)
            && id.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: ":") }
    }
}

public enum ClientError: Error, CustomStringConvertible, Equatable {
    case invalidClientId(String)
    case invalidSecret
    case exists(String)
    case notFound(String)
    case invalidRedirectURI(setting: String, RedirectURIError)
    case tooManyRedirectURIs(setting: String, Int)
    case brokerWithoutReturnURL
    case invalidScope
    case reservedScope(String)
    case unknownAdminScope(String)
    case adminScopesNeedDPoP
    case adminScopeNotHeld(String)

    public var description: String {
        switch self {
        case .invalidClientId(let id): "client id '\(id)' is invalid: use 1-128 visible ASCII characters, no ':'"
        case .invalidSecret: "client secret must be 8-512 bytes"
        case .exists(let id): "client '\(id)' exists already"
        case .notFound(let id): "client '\(id)' does not exist"
        case .invalidRedirectURI(let setting, let error): "\(setting): \(error)"
        case .tooManyRedirectURIs(let setting, let count): "\(setting): \(count) URIs given, at most \(ClientRedirects.maxURIs)"
        case .brokerWithoutReturnURL: "--broker: a public client needs at least one --redirect-uri, the addresses the relay may return to"
        case .invalidScope: "scope must be at most 1024 bytes of space-separated visible ASCII"
        case .reservedScope(let scope): "scope '\(scope)' is reserved for the admin API: grant it with --admin-scope instead"
        case .unknownAdminScope(let scope):
            "admin scope '\(scope)' is unknown; use all, read, or of: \(AdminScope.allCases.map(\.rawValue).joined(separator: ", "))"
        case .adminScopesNeedDPoP: "--admin-scope: a client holding admin scopes must require DPoP (drop --allow-bearer)"
        case .adminScopeNotHeld(let scope): "a client can grant only admin scopes it holds itself; it does not hold \(scope)"
        }
    }
}
