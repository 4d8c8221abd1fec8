// The scim_tokens table: a realm's directory tokens, by public id, hashed.
import Foundation
import SQLKit

struct SQLSCIMTokenStore: SCIMTokenStore {
    let database: KeywardDatabase

    func createToken(_ token: SCIMToken) async throws {
        try await StoreErrorMapping.mapping(
            "createToken", conflict: "realm '\(token.realm)' has a SCIM token named '\(token.name)' already",
            missingParent: "realm '\(token.realm)' does not exist"
        ) {
            try await database.sql.raw("""
                INSERT INTO scim_tokens (realm, id, name, token_hash, created_at)
                VALUES (\(bind: token.realm), \(bind: token.id), \(bind: token.name), \(bind: token.tokenHash),
                    \(bind: StorageTime.milliseconds(token.createdAt)))
                """).run()
        }
    }

    func token(realm: String, id: String) async throws -> SCIMToken? {
        try await StoreErrorMapping.mapping("token(realm:id:)") {
            try await database.sql.raw("""
                SELECT realm, id, name, token_hash, created_at FROM scim_tokens WHERE realm = \(bind: realm) AND id = \(bind: id)
                """).first().map(Self.token(from:))
        }
    }

    func tokens(realm: String) async throws -> [SCIMToken] {
        try await StoreErrorMapping.mapping("tokens(realm:)") {
            try await database.sql.raw("""
                SELECT realm, id, name, token_hash, created_at FROM scim_tokens WHERE realm = \(bind: realm) ORDER BY created_at, id
                """).all().map(Self.token(from:))
        }
    }

    func deleteToken(realm: String, idOrName: String) async throws -> Bool {
        try await StoreErrorMapping.mapping("deleteToken") {
            try await database.sql.countingRows("""
                DELETE FROM scim_tokens WHERE realm = \(bind: realm) AND (id = \(bind: idOrName) OR name = \(bind: idOrName))
                RETURNING 1 AS deleted
                """)
        } > 0
    }

    private static func token(from row: any SQLRow) throws -> SCIMToken {
        SCIMToken(
            realm: try row.decode(column: "realm", as: String.self), id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self), tokenHash: try row.decode(column: "token_hash", as: String.self),
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self))
        )
    }
}
