// What the admin API answers: each resource as JSON, snake_case, times in ISO 8601.
import Foundation

struct AdminUserBody: Encodable {
    let id: String
    let username: String
    let enabled: Bool
    let hasPassword: Bool
    let createdAt: String
    /// The `ETag` a later `If-Match` names.
    let etag: String

    init(_ user: User) {
        (id, username, enabled, hasPassword) = (user.id, user.username, user.enabled, user.passwordHash != nil)
        createdAt = user.createdAt.formatted(.iso8601)
        etag = AdminRevision.etag(user.revision)
    }
}

struct AdminSessionBody: Encodable {
    let id: String
    let amr: [String]
    let userAgent: String?
    let createdAt: String
    let lastSeenAt: String
    let expiresAt: String

    init(_ session: BrowserSession) {
        (id, amr, userAgent) = (session.idHash, session.amr, session.userAgent)
        (createdAt, lastSeenAt, expiresAt) = (session.createdAt.formatted(.iso8601), session.lastSeenAt.formatted(.iso8601), session.expiresAt.formatted(.iso8601))
    }
}

struct AdminIdentityBody: Encodable {
    let kind: String
    let issuer: String
    let subject: String
    let provider: String?
    let email: String?
    let createdAt: String
    let lastLoginAt: String?

    init(_ identity: ExternalIdentity) {
        (kind, issuer, subject) = (identity.kind.rawValue, identity.issuer, identity.subject)
        (provider, email) = (identity.details?.alias, identity.details?.email)
        createdAt = identity.createdAt.formatted(.iso8601)
        lastLoginAt = identity.details?.lastLoginAt?.formatted(.iso8601)
    }
}

struct AdminClientBody: Encodable {
    let clientId: String
    let type: String
    let requireDpop: Bool
    let scope: String
    let adminScopes: [String]
    let redirectUris: [String]
    let postLogoutRedirectUris: [String]
    let firstParty: Bool
    let requirePar: Bool
    let broker: Bool
    let createdAt: String
    /// Only in the answer to its creation: shown once, never stored.
    var clientSecret: String?

    init(_ client: OAuthClient) {
        (clientId, type, requireDpop, scope) = (client.clientId, client.isPublic ? "public" : "confidential", client.requireDPoP, client.scope)
        adminScopes = client.adminScopes.sorted().map(\.rawValue)
        (redirectUris, postLogoutRedirectUris) = (client.redirectURIs.map(\.value), client.postLogoutRedirectURIs.map(\.value))
        (firstParty, requirePar, broker) = (client.firstParty, client.requirePAR, client.broker)
        createdAt = client.createdAt.formatted(.iso8601)
    }
}

struct AdminRealmBody: Encodable {
    let name: String
    let displayName: String
    let issuer: String
    let signingAlgorithm: String
    let accessTokenLifetime: Int
    let createdAt: String

    init(_ realm: Realm, issuer: String) {
        (name, displayName, self.issuer, signingAlgorithm) = (realm.name, realm.displayName, issuer, realm.signingAlgorithm)
        (accessTokenLifetime, createdAt) = (realm.accessTokenLifetime, realm.createdAt.formatted(.iso8601))
    }
}

struct AdminSigningKeyBody: Encodable {
    let kid: String
    let algorithm: String
    let status: String
    let createdAt: String
    let publishedUntil: String?

    init(_ key: StoredSigningKey) {
        (kid, algorithm, status) = (key.kid, key.algorithm, key.status.rawValue)
        (createdAt, publishedUntil) = (key.createdAt.formatted(.iso8601), key.publishUntil?.formatted(.iso8601))
    }
}
