// The host_issuers table: the customer auth providers a realm accepts tokens from, with their key source and rules.
import Foundation
import KeywardJOSE
import SQLKit

public struct SQLHostIssuerStore: HostIssuerStore {
    let database: KeywardDatabase

    public init(database: KeywardDatabase) {
        self.database = database
    }

    public func createIssuer(_ issuer: HostIssuer) async throws {
        let (jwksURL, pem) = Self.keyColumns(issuer.keySource)
        try await StoreErrorMapping.mapping(
            "createIssuer",
            conflict: "issuer '\(issuer.issuer)' is registered already in realm '\(issuer.realm)'",
            missingParent: "realm '\(issuer.realm)' does not exist"
        ) {
            try await database.sql.raw("""
                INSERT INTO host_issuers (realm, issuer, jwks_url, pem_certificates, algorithms, max_lifetime, leeway, audience,
                    require_jti, allow_bearer, clients, created_at)
                VALUES (\(bind: issuer.realm), \(bind: issuer.issuer), \(bind: jwksURL), \(bind: pem),
                    \(bind: issuer.algorithms.map(\.rawValue).joined(separator: ",")), \(bind: Int64(issuer.maxLifetime)),
                    \(bind: Int64(issuer.leeway)), \(bind: issuer.audience), \(bind: issuer.requireJTI), \(bind: issuer.allowBearer),
                    \(bind: issuer.clients?.joined(separator: ",")), \(bind: StorageTime.milliseconds(issuer.createdAt)))
                """).run()
        }
    }

    public func issuer(realm: String, issuer: String) async throws -> HostIssuer? {
        try await StoreErrorMapping.mapping("issuer(realm:issuer:)") {
            try await database.sql.raw("""
                SELECT \(unsafeRaw: Self.columns) FROM host_issuers WHERE realm = \(bind: realm) AND issuer = \(bind: issuer)
                """).first().map(Self.issuer(from:))
        }
    }

    public func listIssuers(realm: String) async throws -> [HostIssuer] {
        try await StoreErrorMapping.mapping("listIssuers") {
            try await database.sql.raw("SELECT \(unsafeRaw: Self.columns) FROM host_issuers WHERE realm = \(bind: realm) ORDER BY issuer")
                .all().map(Self.issuer(from:))
        }
    }

    public func updateIssuer(_ issuer: HostIssuer) async throws {
        let (jwksURL, pem) = Self.keyColumns(issuer.keySource)
        let updated = try await StoreErrorMapping.mapping("updateIssuer") {
            try await database.sql.countingRows("""
                UPDATE host_issuers SET jwks_url = \(bind: jwksURL), pem_certificates = \(bind: pem),
                    algorithms = \(bind: issuer.algorithms.map(\.rawValue).joined(separator: ",")),
                    max_lifetime = \(bind: Int64(issuer.maxLifetime)), leeway = \(bind: Int64(issuer.leeway)), audience = \(bind: issuer.audience),
                    require_jti = \(bind: issuer.requireJTI), allow_bearer = \(bind: issuer.allowBearer),
                    clients = \(bind: issuer.clients?.joined(separator: ","))
                WHERE realm = \(bind: issuer.realm) AND issuer = \(bind: issuer.issuer)
                RETURNING 1 AS updated
                """)
        }
        guard updated > 0 else { throw StoreError.notFound("issuer '\(issuer.issuer)' is not registered in realm '\(issuer.realm)'") }
    }

    public func deleteIssuer(realm: String, issuer: String) async throws {
        let deleted = try await StoreErrorMapping.mapping("deleteIssuer") {
            try await database.sql.countingRows("""
                DELETE FROM host_issuers WHERE realm = \(bind: realm) AND issuer = \(bind: issuer) RETURNING 1 AS deleted
                """)
        }
        guard deleted > 0 else { throw StoreError.notFound("issuer '\(issuer)' is not registered in realm '\(realm)'") }
    }

    /// (jwks_url, pem_certificates): exactly one is set.
    private static func keyColumns(_ source: HostIssuer.KeySource) -> (String?, String?) {
        switch source {
        case .jwksURL(let url): (url, nil)
        case .pemCertificates(let text): (nil, text)
        }
    }

    private static let columns =
        "realm, issuer, jwks_url, pem_certificates, algorithms, max_lifetime, leeway, audience, require_jti, allow_bearer, clients, created_at"

    private static func issuer(from row: any SQLRow) throws -> HostIssuer {
        let keySource: HostIssuer.KeySource
        if let url = try row.decode(column: "jwks_url", as: String?.self) {
            keySource = .jwksURL(url)
        } else {
            keySource = .pemCertificates(try row.decode(column: "pem_certificates", as: String.self))
        }
        let algorithmNames = try row.decode(column: "algorithms", as: String.self).split(separator: ",")
        return HostIssuer(
            realm: try row.decode(column: "realm", as: String.self),
            issuer: try row.decode(column: "issuer", as: String.self),
            keySource: keySource,
            // Written only from JWSAlgorithm values; a name this build does not know is left out rather than trusted.
            algorithms: algorithmNames.compactMap { JWSAlgorithm(rawValue: String($0)) },
            maxLifetime: Int(try row.decode(column: "max_lifetime", as: Int64.self)),
            leeway: Int(try row.decode(column: "leeway", as: Int64.self)),
            audience: try row.decode(column: "audience", as: String?.self),
            requireJTI: try row.decode(column: "require_jti", as: Bool.self),
            allowBearer: try row.decode(column: "allow_bearer", as: Bool.self),
            clients: try row.decode(column: "clients", as: String?.self).map { $0.split(separator: ",").map(String.init) },
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self))
        )
    }
}
