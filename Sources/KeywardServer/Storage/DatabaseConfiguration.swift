// Which database engine and where: parsing sqlite: and postgres:// database URLs, passwords masked in errors.
import Foundation

/// The two engines Keyward runs on. Queries are written once for both; only DDL and
/// transaction control may differ per engine.
public enum DatabaseEngine: String, Sendable, Equatable {
    case sqlite
    case postgres
}

/// How hard the embedded database works to keep a commit through a power loss (`sqlite.synchronous`).
///
/// Both survive a crash of the process: a commit in the write-ahead log is in the operating system's hands. They
/// differ when the machine loses power or the kernel panics before the log reaches the disk:
/// - `full` syncs the log at every commit, so a commit that was answered is on disk;
/// - `normal` syncs only at checkpoints, so the last commits before the loss may be gone (the file is never corrupt).
public enum SQLiteSynchronous: String, Sendable, Equatable, CaseIterable {
    case normal
    case full

    /// The `PRAGMA synchronous` statement that applies it to a connection.
    var pragma: String { "PRAGMA synchronous = \(rawValue.uppercased())" }
}

/// Where the database lives. Built directly or parsed from a URL string:
/// `sqlite:relative/path.db`, `sqlite:/abs/path.db`, `sqlite:///abs/path.db`,
/// `postgres://user:password@host:port/database?sslmode=...` (or `postgresql://`).
public enum DatabaseConfiguration: Sendable, Equatable {
    case sqlite(path: String)
    case postgres(url: String)

    public init(url: String) throws {
        let trimmed = url.trimmingCharacters(in: .whitespaces)
        guard let colon = trimmed.firstIndex(of: ":") else {
            throw DatabaseConfigurationError(value: url, problem: Self.expectedForms)
        }
        let scheme = trimmed[..<colon].lowercased()
        let rest = String(trimmed[trimmed.index(after: colon)...])
        switch scheme {
        case "sqlite":
            self = .sqlite(path: try Self.sqlitePath(from: rest, original: url))
        case "postgres", "postgresql":
            // Validate now so a typo fails at startup with a clear message, not at first query.
            _ = try PostgresURL(parsing: trimmed)
            self = .postgres(url: trimmed)
        default:
            throw DatabaseConfigurationError(value: url, problem: "unsupported scheme '\(scheme)'; \(Self.expectedForms)")
        }
    }

    public var engine: DatabaseEngine {
        switch self {
        case .sqlite: .sqlite
        case .postgres: .postgres
        }
    }

    /// True for the single-file embedded database (no external server to configure).
    public var isEmbedded: Bool { engine == .sqlite }

    /// What start-up reports when the database did not answer its first statement: which server, and the setting
    /// that names it.
    func unreachableAtStartup(_ reason: String) -> String {
        switch self {
        case .sqlite(let path):
            return "the embedded database at \(path) did not answer at start-up: \(reason)"
        case .postgres(let url):
            let server = (try? PostgresURL(parsing: url)).map { "\($0.host):\($0.port)" } ?? "?"
            return "PostgreSQL at \(server) did not answer at start-up (\(reason)); check that it is running and that "
                + "databaseURL (env KEYWARD_DATABASE_URL, --database) names it"
        }
    }

    /// A warning to log at start-up when the connection to the database is not protected (see
    /// `PostgresURL.transportWarning`); nil for SQLite and for a verified or loopback PostgreSQL.
    public var transportWarning: String? {
        guard case .postgres(let url) = self else { return nil }
        return (try? PostgresURL(parsing: url))?.transportWarning
    }

    static let expectedForms =
        "expected sqlite:PATH, sqlite:///ABSOLUTE/PATH or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"

    private static func sqlitePath(from rest: String, original: String) throws -> String {
        let path: String
        if rest.hasPrefix("//") {
            // URL form: only an empty authority is meaningful ("sqlite:///abs/path.db").
            let afterSlashes = rest.dropFirst(2)
            guard afterSlashes.hasPrefix("/") else {
                throw DatabaseConfigurationError(
                    value: original,
                    problem: "a sqlite URL with '//' needs an absolute path (sqlite:///abs/path.db); use sqlite:relative.db for a relative path"
                )
            }
            path = String(afterSlashes)
        } else {
            path = rest
        }
        guard !path.isEmpty, path != "/" else {
            throw DatabaseConfigurationError(value: original, problem: "the sqlite database path is empty")
        }
        guard !path.hasSuffix("/") else {
            throw DatabaseConfigurationError(value: original, problem: "the sqlite database path names a directory, not a file")
        }
        guard !path.contains("\0") else {
            throw DatabaseConfigurationError(value: original, problem: "the sqlite database path contains a NUL byte")
        }
        return path
    }
}

/// A database URL that cannot be used. The message names the value, with any password masked.
public struct DatabaseConfigurationError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The offending value, password masked.
    public let value: String
    public let problem: String

    public init(value: String, problem: String) {
        self.value = DatabaseConfigurationError.maskingPassword(in: value)
        self.problem = problem
    }

    public var description: String { "invalid database URL '\(value)': \(problem)" }

    /// Replaces the password of `scheme://user:password@host` with `***` so the error can be logged safely.
    static func maskingPassword(in value: String) -> String {
        guard let schemeEnd = value.range(of: "://") else { return value }
        let authorityStart = schemeEnd.upperBound
        let authorityEnd = value[authorityStart...].firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? value.endIndex
        let authority = value[authorityStart..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return value }
        return String(value[..<value.index(after: colon)]) + "***" + String(value[at...])
    }
}
