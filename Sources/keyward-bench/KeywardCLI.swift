// Running the keyward operator CLI on the bench's server to set up users, clients and issuers for scenarios.
import Foundation

/// The `keyward` operator CLI run on the data directory or database of the server the bench started, for the
/// set-up of scenarios that need users, clients or issuers the demo realm does not have.
struct KeywardCLI: Sendable {
    let binary: String
    let baseURL: String
    let database: String?
    let dataDirectory: String?

    /// Makes names unique per run: a PostgreSQL database outlives the server the bench started.
    static let runTag = String(UInt32.random(in: .min ... .max), radix: 36)

    /// Runs `keyward ARGUMENTS…` and returns its standard output; throws with the end of its standard error when
    /// it exits with a failure.
    @discardableResult
    func run(_ arguments: [String], environment extra: [String: String] = [:]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        var full = arguments
        if let dataDirectory { full += ["--data-dir", dataDirectory] }
        if let database { full += ["--database", database] }
        process.arguments = full
        var environment = ProcessInfo.processInfo.environment
        environment["KEYWARD_PUBLIC_URL"] = baseURL
        environment.merge(extra) { _, new in new }
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        // A file rather than a pipe: only standard output is read while the command runs, so a chatty standard
        // error could otherwise fill its pipe and block the command.
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-bench-cli-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: errors.path, contents: nil), let errorHandle = FileHandle(forWritingAtPath: errors.path) else {
            throw BenchError("cannot create \(errors.path)")
        }
        defer { try? FileManager.default.removeItem(at: errors) }
        process.standardError = errorHandle
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try? errorHandle.close()
        guard process.terminationStatus == 0 else {
            let stderr = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            throw BenchError("keyward \(arguments.prefix(6).joined(separator: " ")) failed (\(process.terminationStatus)): \(stderr.suffix(300))")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
