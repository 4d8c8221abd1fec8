// The realms table.
import Foundation
import SQLKit

public struct SQLRealmStore: RealmStore {
    let database: KeywardDatabase

    public init(database: KeywardDatabase) {
        self.database = database
    }

    public func createRealm(_ realm: Realm) async throws {
        try await StoreErrorMapping.mapping("createRealm", conflict: "realm '\(realm.name)' exists already") {
            try await database.sql.raw("""
                INSERT INTO realms (name, display_name, signing_algorithm, access_token_lifetime, demo, created_at)
                VALUES (\(bind: realm.name), \(bind: realm.displayName), \(bind: realm.signingAlgorithm),
                        \(bind: Int64(realm.accessTokenLifetime)), \(bind: realm.demo), \(bind: StorageTime.milliseconds(realm.createdAt)))
                """).run()
        }
    }

    public func realm(named name: String) async throws -> Realm? {
        try await StoreErrorMapping.mapping("realm(named:)") {
            try await database.sql.raw("SELECT \(unsafeRaw: Self.columns) FROM realms WHERE name = \(bind: name)")
                .first().map(Self.realm(from:))
        }
    }

    public func listRealms() async throws -> [Realm] {
        try await StoreErrorMapping.mapping("listRealms") {
            try await database.sql.raw("SELECT \(unsafeRaw: Self.columns) FROM realms ORDER BY name")
                .all().map(Self.realm(from:))
        }
    }

    private static let columns = "name, display_name, signing_algorithm, access_token_lifetime, demo, created_at"

    private static func realm(from row: any SQLRow) throws -> Realm {
        Realm(
            name: try row.decode(column: "name", as: String.self),
            displayName: try row.decode(column: "display_name", as: String.self),
            signingAlgorithm: try row.decode(column: "signing_algorithm", as: String.self),
            accessTokenLifetime: Int(try row.decode(column: "access_token_lifetime", as: Int64.self)),
            demo: try row.decode(column: "demo", as: Bool.self),
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self))
        )
    }
}
