// The identity_providers table: a realm's identity providers and their sealed secrets.
import Foundation
import KeywardJOSE
import SQLKit

public struct SQLIdentityProviderStore: IdentityProviderStore {
    let database: KeywardDatabase

    public init(database: KeywardDatabase) {
        self.database = database
    }

    public func createProvider(_ provider: IdentityProvider) async throws {
        try await StoreErrorMapping.mapping(
            "createProvider",
            conflict: "provider '\(provider.alias)' exists already in realm '\(provider.realm)'",
            missingParent: "realm '\(provider.realm)' does not exist"
        ) {
            try await database.sql.raw("""
                INSERT INTO identity_providers (realm, alias, kind, issuer, client_id, client_secret, scopes, display_name,
                    trust_verified_email, hosted_domain, apple_team_id, apple_key_id, apple_private_key, authorization_endpoint,
                    token_endpoint, jwks_uri, userinfo_endpoint, created_at, username_claim)
                VALUES (\(bind: provider.realm), \(bind: provider.alias), \(bind: provider.kind.rawValue), \(bind: provider.issuer),
                    \(bind: provider.clientId), \(bind: provider.sealedClientSecret.map(Base64URL.encode)), \(bind: provider.scopes.joined(separator: " ")),
                    \(bind: provider.displayName), \(bind: provider.trustVerifiedEmail), \(bind: provider.hostedDomain),
                    \(bind: provider.appleKey?.teamId), \(bind: provider.appleKey?.keyId), \(bind: provider.appleKey.map { Base64URL.encode($0.sealedPrivateKey) }),
                    \(bind: provider.endpoints?.authorization), \(bind: provider.endpoints?.token), \(bind: provider.endpoints?.jwks),
                    \(bind: provider.endpoints?.userinfo), \(bind: StorageTime.milliseconds(provider.createdAt)), \(bind: provider.usernameClaim))
                """).run()
        }
    }

    public func provider(realm: String, alias: String) async throws -> IdentityProvider? {
        try await StoreErrorMapping.mapping("provider(realm:alias:)") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns) FROM identity_providers WHERE realm = \(bind: realm) AND alias = \(bind: alias)
                """).first().map(Self.provider(from:))
        }
    }

    public func listProviders(realm: String) async throws -> [IdentityProvider] {
        try await StoreErrorMapping.mapping("listProviders") {
            try await database.sql.raw("SELECT \(unsafeRaw: Self.columns) FROM identity_providers WHERE realm = \(bind: realm) ORDER BY alias")
                .all().map(Self.provider(from:))
        }
    }

    public func removeProvider(realm: String, alias: String) async throws -> Bool {
        try await StoreErrorMapping.mapping("removeProvider") {
            try await database.sql.countingRows("""
                DELETE FROM identity_providers WHERE realm = \(bind: realm) AND alias = \(bind: alias) RETURNING 1 AS removed
                """) > 0
        }
    }

    private static let columns = """
        realm, alias, kind, issuer, client_id, client_secret, scopes, display_name, trust_verified_email, hosted_domain, apple_team_id, \
        apple_key_id, apple_private_key, authorization_endpoint, token_endpoint, jwks_uri, userinfo_endpoint, created_at, username_claim
        """

    private static func provider(from row: any SQLRow) throws -> IdentityProvider {
        let kindText = try row.decode(column: "kind", as: String.self)
        guard let kind = IdentityProvider.Kind(rawValue: kindText) else {
            throw StoreError.unavailable("unexpected identity_providers.kind '\(kindText)' in the database")
        }
        func sealed(_ column: String) throws -> [UInt8]? {
            try row.decode(column: column, as: String?.self).map { text in
                guard let bytes = try? Base64URL.decode(text) else { throw StoreError.unavailable("identity_providers.\(column) is not base64url") }
                return bytes
            }
        }
        var endpoints: IdentityProvider.Endpoints?
        if let authorization = try row.decode(column: "authorization_endpoint", as: String?.self),
            let token = try row.decode(column: "token_endpoint", as: String?.self)
        {
            endpoints = .init(
                authorization: authorization, token: token, jwks: try row.decode(column: "jwks_uri", as: String?.self),
                userinfo: try row.decode(column: "userinfo_endpoint", as: String?.self)
            )
        }
        var appleKey: IdentityProvider.AppleKey?
        if let teamId = try row.decode(column: "apple_team_id", as: String?.self), let keyId = try row.decode(column: "apple_key_id", as: String?.self),
            let key = try sealed("apple_private_key")
        {
            appleKey = .init(teamId: teamId, keyId: keyId, sealedPrivateKey: key)
        }
        return IdentityProvider(
            realm: try row.decode(column: "realm", as: String.self),
            alias: try row.decode(column: "alias", as: String.self),
            kind: kind,
            issuer: try row.decode(column: "issuer", as: String.self),
            clientId: try row.decode(column: "client_id", as: String.self),
            sealedClientSecret: try sealed("client_secret"),
            scopes: try row.decode(column: "scopes", as: String.self).split(separator: " ").map(String.init),
            displayName: try row.decode(column: "display_name", as: String.self),
            trustVerifiedEmail: try row.decode(column: "trust_verified_email", as: Bool.self),
            hostedDomain: try row.decode(column: "hosted_domain", as: String?.self),
            usernameClaim: try row.decode(column: "username_claim", as: String?.self),
            endpoints: endpoints,
            appleKey: appleKey,
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self))
        )
    }
}
