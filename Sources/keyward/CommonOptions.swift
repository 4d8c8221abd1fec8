// What every keyward command shares: configuration and data options, the runtime, one-line errors.
import ArgumentParser
import Foundation
import KeywardServer
import Logging

/// Options every command shares: where the configuration and the data live.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: "JSON configuration file (env KEYWARD_CONFIG).")
    var config: String?

    @Option(name: .long, help: "Data directory for the embedded database and key file (env KEYWARD_DATA_DIR, default ./keyward-data).")
    var dataDir: String?

    @Option(name: .long, help: "Database URL: sqlite:PATH or postgres://user:pass@host:port/db (env KEYWARD_DATABASE_URL).")
    var database: String?

    var overrides: [String: String] {
        var values: [String: String] = [:]
        values["dataDir"] = dataDir
        values["databaseURL"] = database
        return values
    }

    /// A bad setting surfaces as one line, `Error: invalid configuration: <setting> (env …): <problem>`.
    func loadConfiguration(extra: [String: String] = [:]) async throws -> KeywardConfiguration {
        try await KeywardConfiguration.load(overrides: overrides.merging(extra) { $1 }, configFile: config)
    }
}

/// Admin commands log only warnings, as text on stderr, so their own output stays readable.
func quietLogger() -> Logger {
    var logger = Logger(label: "keyward") { label in StreamLogHandler.standardError(label: label) }
    logger.logLevel = .warning
    return logger
}

/// Opens the runtime for an admin command, runs `body`, and always closes the database.
func withRuntime<T>(_ options: CommonOptions, _ body: (KeywardRuntime) async throws -> T) async throws -> T {
    let runtime = try await KeywardRuntime.start(configuration: try await options.loadConfiguration(), logger: quietLogger())
    do {
        let result = try await body(runtime)
        try await runtime.shutdown()
        return result
    } catch {
        try? await runtime.shutdown()
        throw error
    }
}

func requireRealm(_ runtime: KeywardRuntime, _ name: String) async throws -> Realm {
    guard let realm = try await runtime.oauth.realms.realm(named: name) else {
        throw CommandError("realm '\(name)' does not exist (list them with `keyward realms list`)")
    }
    return realm
}

/// A failure of a command's own work (not of its arguments): printed as one `Error:` line, without usage.
struct CommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Settings given as `KEY=VALUE` arguments, each split at its first `=`; the error names an argument that is not one.
func keyValuePairs(_ assignments: [String]) throws -> [(key: String, value: String)] {
    try assignments.map { assignment in
        let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { throw CommandError("'\(assignment)' is not KEY=VALUE") }
        return (parts[0], parts[1])
    }
}
