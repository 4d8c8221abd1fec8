// The `keyward serve --demo` child process the bench measures, started on a free port and stopped gracefully.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A `keyward serve --demo` child process on a free loopback port with a throwaway data directory.
final class ServerProcess: @unchecked Sendable {
    let baseURL: String
    private let process: Process
    let dataDirectory: URL

    var processIdentifier: Int32 { process.processIdentifier }

    private init(baseURL: String, process: Process, dataDirectory: URL) {
        self.baseURL = baseURL
        self.process = process
        self.dataDirectory = dataDirectory
    }

    static func siblingBinary(named name: String) -> String {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// `log`: a file the server's log is appended to (nil: discarded).
    static func start(binary: String, database: String?, log: String?) async throws -> ServerProcess {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchError("no keyward binary at \(binary); run `swift build -c release --product keyward` or pass --server")
        }
        let port = try freePort()
        let dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-bench-\(UUID().uuidString)")
        let baseURL = "http://127.0.0.1:\(port)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        var arguments = ["serve", "--demo", "--host", "127.0.0.1", "--port", String(port), "--public-url", baseURL, "--data-dir", dataDirectory.path, "--log-level", "warning"]
        if let database { arguments += ["--database", database] }
        process.arguments = arguments
        // The load generator is one client address with every connection's callback in flight at once; the
        // per-address limit on provider callbacks (20, in flight included) is for people, not for this.
        var environment = ProcessInfo.processInfo.environment
        environment["KEYWARD_ACCOUNTS_PROVIDER_CALLBACK_FAILURES_PER_ADDRESS"] = "100000"
        // broker: 32 people each completing hundreds of relays a minute.
        environment["KEYWARD_BROKER_RELAYS_PER_PERSON_PER_MINUTE"] = "100000"
        process.environment = environment
        if let log {
            guard FileManager.default.createFile(atPath: log, contents: nil), let handle = FileHandle(forWritingAtPath: log) else {
                throw BenchError("cannot write the server log to \(log)")
            }
            process.standardOutput = handle
        } else {
            process.standardOutput = FileHandle.nullDevice
        }
        try process.run()
        let server = ServerProcess(baseURL: baseURL, process: process, dataDirectory: dataDirectory)
        for _ in 0..<300 {
            guard process.isRunning else { throw BenchError("keyward exited with status \(process.terminationStatus) during start-up") }
            let probe = RawHTTPConnection.request(method: "GET", path: "/readyz", port: port, headers: [])
            if (try? RawHTTPConnection(port: port).send(probe).status) == 200 { return server }
            try await Task.sleep(for: .milliseconds(100))
        }
        server.stop()
        throw BenchError("keyward did not become ready on \(baseURL) within 30 s")
    }

    /// SIGTERM, then SIGKILL if the server has not finished its graceful shutdown within `grace`.
    func stop(grace: Duration = .seconds(30)) {
        if process.isRunning {
            process.terminate()
            let deadline = ContinuousClock.now + grace
            while process.isRunning, ContinuousClock.now < deadline { usleep(50_000) }
            if process.isRunning {
                FileHandle.standardError.write(Data("[keyward-bench] keyward did not stop within \(grace) of SIGTERM; killing it\n".utf8))
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        try? FileManager.default.removeItem(at: dataDirectory)
    }

    /// Asks the kernel for an unused port by binding to port 0.
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw BenchError("could not find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
