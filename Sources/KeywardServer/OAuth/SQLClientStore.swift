// The oauth_clients table: the clients of a realm, confidential (with a secret digest) or public, and their DPoP requirement.
import Foundation
import KeywardHTTPInput
import SQLKit

public struct SQLClientStore: ClientStore {
    let database: KeywardDatabase

    public init(database: KeywardDatabase) {
        self.database = database
    }

    public func createClient(_ client: OAuthClient) async throws {
        try await StoreErrorMapping.mapping(
            "createClient",
            conflict: "client '\(client.clientId)' exists already in realm '\(client.realm)'",
            missingParent: "realm '\(client.realm)' does not exist"
        ) {
            try await database.sql.raw("""
                INSERT INTO oauth_clients (realm, client_id, secret_salt, secret_hash, require_dpop, scope, public_client,
                                           redirect_uris, post_logout_redirect_uris, first_party, require_par, broker, admin_scopes, created_at)
                VALUES (\(bind: client.realm), \(bind: client.clientId), \(bind: Data(client.secretSalt)),
                        \(bind: Data(client.secretHash)), \(bind: client.requireDPoP), \(bind: client.scope), \(bind: client.isPublic),
                        \(bind: Self.stored(client.redirectURIs)), \(bind: Self.stored(client.postLogoutRedirectURIs)),
                        \(bind: client.firstParty), \(bind: client.requirePAR), \(bind: client.broker), \(bind: AdminScope.stored(client.adminScopes)),
                        \(bind: StorageTime.milliseconds(client.createdAt)))
                """).run()
        }
    }

    public func client(realm: String, clientId: String) async throws -> OAuthClient? {
        try await StoreErrorMapping.mapping("client(realm:clientId:)") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns) FROM oauth_clients WHERE realm = \(bind: realm) AND client_id = \(bind: clientId)
                """).first().map(Self.client(from:))
        }
    }

    public func listClients(realm: String) async throws -> [OAuthClient] {
        try await StoreErrorMapping.mapping("listClients") {
            try await database.sql.raw("SELECT \(unsafeRaw: Self.columns) FROM oauth_clients WHERE realm = \(bind: realm) ORDER BY client_id")
                .all().map(Self.client(from:))
        }
    }

    public func deleteClient(realm: String, clientId: String) async throws {
        let deleted = try await StoreErrorMapping.mapping("deleteClient") {
            try await database.sql.countingRows("""
                DELETE FROM oauth_clients WHERE realm = \(bind: realm) AND client_id = \(bind: clientId) RETURNING 1 AS deleted
                """)
        }
        guard deleted > 0 else { throw StoreError.notFound("client '\(clientId)' does not exist in realm '\(realm)'") }
    }

    private static let columns = """
        realm, client_id, secret_salt, secret_hash, require_dpop, scope, public_client, redirect_uris, post_logout_redirect_uris, first_party,
        require_par, broker, admin_scopes, created_at
        """

    /// Space-separated: a registered URI is printable ASCII without spaces (`RedirectURI`).
    private static func stored(_ uris: [RedirectURI]) -> String { uris.map(\.value).joined(separator: " ") }

    /// The stored URIs, each checked again: one that no longer passes (a rule made stricter) is left out, not trusted.
    private static func redirectURIs(_ text: String) -> [RedirectURI] {
        text.split(separator: " ").compactMap { try? RedirectURI(registering: String($0)) }
    }

    private static func client(from row: any SQLRow) throws -> OAuthClient {
        var client = OAuthClient(
            realm: try row.decode(column: "realm", as: String.self),
            clientId: try row.decode(column: "client_id", as: String.self),
            secretSalt: [UInt8](try row.decode(column: "secret_salt", as: Data.self)),
            secretHash: [UInt8](try row.decode(column: "secret_hash", as: Data.self)),
            requireDPoP: try row.decode(column: "require_dpop", as: Bool.self),
            scope: try row.decode(column: "scope", as: String.self),
            isPublic: try row.decode(column: "public_client", as: Bool.self),
            redirects: ClientRedirects(
                redirectURIs: redirectURIs(try row.decode(column: "redirect_uris", as: String.self)),
                postLogoutRedirectURIs: redirectURIs(try row.decode(column: "post_logout_redirect_uris", as: String.self)),
                firstParty: try row.decode(column: "first_party", as: Bool.self), requirePAR: try row.decode(column: "require_par", as: Bool.self),
                broker: try row.decode(column: "broker", as: Bool.self)
            ),
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self))
        )
        client.adminScopes = AdminScope.fromStored(try row.decode(column: "admin_scopes", as: String.self))
        return client
    }
}
