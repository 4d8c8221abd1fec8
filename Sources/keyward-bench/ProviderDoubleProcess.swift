// The Python OpenID provider double the social-callback benchmark runs as a child process.
import Foundation
import KeywardJOSE
#if canImport(Glibc)
import Glibc
#endif

/// tests/idp/social_callback_provider.py as a child process: the OpenID provider the `social-callback` scenario's
/// callbacks exchange their codes with. It signs each id_token when its /authorize is called (before the measured
/// phase), answers /token from memory, and reports its own CPU time, which the scenario prints beside Keyward's.
/// Stopped by `stop()`, or by its own `--max-seconds` watchdog if this process dies first.
final class ProviderDoubleProcess: @unchecked Sendable {
    /// Its base URL (http://127.0.0.1:PORT), which is also its issuer.
    let baseURL: String
    let issuer: String
    let port: Int
    private let process: Process
    private let output: Pipe
    private let stderrFile: URL

    /// What /_bench/cpu reports.
    struct CPUReport {
        let cpuSecondsSinceMark: Double
        let tokenRequestsSinceMark: Int
        let jwksRequestsSinceMark: Int
    }


    static var script: URL { SourceTree.root.appendingPathComponent("tests/idp/social_callback_provider.py") }

    /// The Python the repository's tests use: KEYWARD_TEST_PYTHON, else the source tree's .venv (what
    /// `bash .ci/run venv` makes, with joserfc).
    static func python() throws -> String {
        if let python = ProcessInfo.processInfo.environment["KEYWARD_TEST_PYTHON"], !python.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: python) else {
                throw BenchError("KEYWARD_TEST_PYTHON is \(python), which is not an executable file")
            }
            return python
        }
        let venv = SourceTree.root.appendingPathComponent(".venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: venv) else {
            throw BenchError(
                "social-callback runs \(script.path) and needs a Python with joserfc: set KEYWARD_TEST_PYTHON to one "
                    + "(`bash .ci/run venv` makes \(venv), which is used when the variable is unset; it does not exist)"
            )
        }
        return venv
    }

    /// Starts the double for `clientId` and waits for the JSON line it prints once it serves. `nice`: its
    /// scheduling priority, the load generator's (a real provider runs on machines of its own, so on the shared
    /// cores the server goes first).
    init(clientId: String, nice: Int32) throws {
        let python = try Self.python()
        stderrFile = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-bench-provider-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: stderrFile.path, contents: nil), let errors = FileHandle(forWritingAtPath: stderrFile.path) else {
            throw BenchError("cannot create \(stderrFile.path)")
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        // No pre-signed manifest (--tokens 0): every code comes from /authorize, called through Keyward's start
        // route before the measurement.
        process.arguments = [Self.script.path, "--port", "0", "--client-id", clientId, "--tokens", "0", "--max-seconds", "3600"]
        output = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()

        // The first line announces it; a double that fails first closes its stdout, never a hang.
        var line: [UInt8] = []
        while true {
            guard let byte = output.fileHandleForReading.readData(ofLength: 1).first, byte != UInt8(ascii: "\n") else { break }
            line.append(byte)
        }
        guard let announced = try? StrictJSON.parseObject(line), let base = announced["base_url"]?.stringValue,
            let issuer = announced["issuer"]?.stringValue, let port = URLComponents(string: base)?.port
        else {
            process.waitUntilExit()
            let stderr = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: stderrFile)
            throw BenchError("\(Self.script.lastPathComponent) did not start (exit \(process.terminationStatus)): \(stderr.suffix(600))")
        }
        baseURL = base
        self.issuer = issuer
        self.port = port
        // Linux keeps a nice value per thread: this sets the main thread's, which every connection's thread is
        // started from (none yet: it has only announced itself).
        #if os(Linux)
        if nice > 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(process.processIdentifier), nice) }
        #endif
    }

    /// Starts the "since mark" counters: call it as the measured phase begins.
    func mark() throws {
        _ = try request(method: "POST", path: "/_bench/mark")
    }

    func cpu() throws -> CPUReport {
        let report = try request(method: "GET", path: "/_bench/cpu")
        guard let cpu = report["cpu_seconds_since_mark"]?.numberValue, let tokens = report["token_requests_since_mark"]?.intValue,
            let jwks = report["jwks_requests_since_mark"]?.intValue
        else { throw BenchError("the provider double's /_bench/cpu answered without its counters (an older social_callback_provider.py?)") }
        return CPUReport(cpuSecondsSinceMark: cpu, tokenRequestsSinceMark: Int(tokens), jwksRequestsSinceMark: Int(jwks))
    }

    private func request(method: String, path: String) throws -> JSONObject {
        let answer = try RawHTTPConnection(port: port).send(RawHTTPConnection.request(method: method, path: path, port: port, headers: []))
        guard answer.status == 200, let object = try? StrictJSON.parseObject(answer.body) else {
            throw BenchError("provider double \(method) \(path): \(answer.status) \(String(decoding: answer.body.prefix(200), as: UTF8.self))")
        }
        return object
    }

    /// SIGTERM, then SIGKILL if it has not exited within 5 s; returns the exit line it prints on SIGTERM (its
    /// CPU time in all), or nil.
    @discardableResult
    func stop() -> String? {
        defer { try? FileManager.default.removeItem(at: stderrFile) }
        guard process.isRunning else { return nil }
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning, ContinuousClock.now < deadline { usleep(50_000) }
        if process.isRunning {
            FileHandle.standardError.write(Data("[keyward-bench] the provider double did not stop within 5 s of SIGTERM; killing it\n".utf8))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let rest = output.fileHandleForReading.readDataToEndOfFile()
        return String(decoding: rest, as: UTF8.self).split(separator: "\n").last.map(String.init)
    }
}
