// Reading a postgres:// URL into connection settings: TLS mode, search path, prepared statements.
import Foundation
import PostgresNIO

/// A parsed `postgres://` / `postgresql://` URL.
///
/// Query parameters: `sslmode` with libpq's meanings (`disable`; `allow`/`prefer`, the default: TLS when the
/// server offers it, certificate not checked; `require`: TLS, certificate not checked; `verify-ca`: TLS,
/// chain checked; `verify-full`: TLS, chain and host name checked), `search_path` (a schema list sent as
/// a startup parameter), `application_name` and `prepared_statements` (`on`, the default, or `off`).
struct PostgresURL: Equatable {
    enum TLSMode: String, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    var host: String
    var port: Int
    var username: String
    var password: String?
    var database: String?
    var tlsMode: TLSMode
    var searchPath: String?
    var applicationName: String
    /// Whether statements are run as named prepared statements (`PostgresStatementCache`); `prepared_statements=off`
    /// for a pooler in transaction mode that cannot carry them (PgBouncer before 1.21).
    var preparedStatements: Bool

    init(parsing value: String) throws {
        func fail(_ problem: String) -> DatabaseConfigurationError {
            DatabaseConfigurationError(value: value, problem: problem)
        }
        guard let components = URLComponents(string: value) else {
            throw fail("not a valid URL; \(DatabaseConfiguration.expectedForms)")
        }
        guard let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw fail("unsupported scheme; \(DatabaseConfiguration.expectedForms)")
        }
        guard let host = components.host, !host.isEmpty else { throw fail("the host is missing") }
        guard let username = components.user, !username.isEmpty else { throw fail("the user name is missing") }
        if let port = components.port, !(1...65535).contains(port) { throw fail("port \(port) is out of range") }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.contains("/") else { throw fail("the path must be a single database name") }

        var tlsMode = TLSMode.prefer
        var searchPath: String?
        var applicationName = "keyward"
        var preparedStatements = true
        for item in components.queryItems ?? [] {
            let itemValue = item.value ?? ""
            switch item.name {
            case "sslmode":
                guard let mode = TLSMode(rawValue: itemValue) else {
                    throw fail("sslmode '\(itemValue)' is not one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                tlsMode = mode
            case "search_path":
                guard !itemValue.isEmpty else { throw fail("search_path is empty") }
                searchPath = itemValue
            case "application_name":
                applicationName = itemValue
            case "prepared_statements":
                guard let enabled = ["on": true, "true": true, "off": false, "false": false][itemValue.lowercased()] else {
                    throw fail("prepared_statements '\(itemValue)' is not one of on, off")
                }
                preparedStatements = enabled
            default:
                throw fail("unknown parameter '\(item.name)' (supported: sslmode, search_path, application_name, prepared_statements)")
            }
        }

        self.host = host
        self.port = components.port ?? 5432
        self.username = username
        self.password = components.password
        self.database = path.isEmpty ? nil : path
        self.tlsMode = tlsMode
        self.searchPath = searchPath
        self.applicationName = applicationName
        self.preparedStatements = preparedStatements
    }

    /// Why this connection can be read or changed on the way, or nil: the server is not on a loopback address
    /// and `sslmode` stops short of `verify-full` (without it, anyone on the path can pose as the server).
    var transportWarning: String? {
        guard tlsMode != .verifyFull, !OutboundURL.isLoopback(host) else { return nil }
        return "PostgreSQL at \(host) is not on this machine and sslmode=\(tlsMode.rawValue) does not verify the server's certificate "
            + "and host name: the database password and every row can be read or changed on the network. Use sslmode=verify-full."
    }

    /// No statement of a request runs longer: a statement stuck behind a lock would otherwise hold its pooled
    /// connection, and every request waiting on it (the grouped replay writer's batch), without bound. Migrations
    /// lift it for their own transaction.
    static let statementTimeoutMilliseconds = 30_000

    /// How long a request waits for a pooled connection before it is answered 503: PostgreSQL is down, or every
    /// connection is busy. A client (or a load balancer) with a 10 s deadline then still hears why.
    static let connectionWait = Duration.seconds(5)

    /// The PostgresNIO pool configuration for this URL.
    func clientConfiguration() -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls
        )
        var parameters = [("application_name", applicationName), ("statement_timeout", String(Self.statementTimeoutMilliseconds))]
        if let searchPath { parameters.append(("search_path", searchPath)) }
        configuration.options.additionalStartupParameters = parameters
        return configuration
    }

    private var tls: PostgresClient.Configuration.TLS {
        var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
        switch tlsMode {
        case .disable:
            return .disable
        case .allow, .prefer:
            tlsConfiguration.certificateVerification = .none
            return .prefer(tlsConfiguration)
        case .require:
            tlsConfiguration.certificateVerification = .none
            return .require(tlsConfiguration)
        case .verifyCA:
            tlsConfiguration.certificateVerification = .noHostnameVerification
            return .require(tlsConfiguration)
        case .verifyFull:
            tlsConfiguration.certificateVerification = .fullVerification
            return .require(tlsConfiguration)
        }
    }
}
