// Test support: a real Keyward listening on a loopback port with the demo seed and a fresh SQLite database.
import Foundation
import Hummingbird
import KeywardServer
import Logging
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

/// A real Keyward listening on a loopback port with the demo seed, on a fresh SQLite database.
enum LiveServer {
    static func run(_ body: (_ baseURL: String) async throws -> Void) async throws {
        try await run { baseURL, _ in try await body(baseURL) }
    }

    /// The same, also handing over the runtime (to start logins as the browser pages would).
    static func run(_ body: (_ baseURL: String, _ runtime: KeywardRuntime) async throws -> Void) async throws {
        try await run(clock: SystemClock(), body)
    }

    /// The same on a clock the test moves, with settings `configure` changes (e.g. `dpopRequireNonce`).
    static func run(
        clock: any KeywardClock, configure: (inout KeywardConfiguration) -> Void = { _ in },
        _ body: (_ baseURL: String, _ runtime: KeywardRuntime) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-e2e-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try freePort()
        var configuration = KeywardConfiguration()
        configuration.port = port
        configuration.dataDirectory = directory.path
        configure(&configuration)
        var logger = Logger(label: "keyward-e2e")
        logger.logLevel = .warning
        let runtime = try await KeywardRuntime.start(configuration: configuration, logger: logger, clock: clock)
        _ = try await runtime.seedDemo()
        let ready = AsyncStream<Void>.makeStream()
        let app = runtime.makeApplication { _ in ready.continuation.yield() }
        let serviceGroup = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await serviceGroup.run() }
                for await _ in ready.stream { break }
                do {
                    try await body(configuration.resolvedPublicURL, runtime)
                } catch {
                    await serviceGroup.triggerGracefulShutdown()
                    throw error
                }
                await serviceGroup.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        } catch {
            // Shut down before the error goes up, or the runtime's HTTP client traps in its deinit and hides it.
            try? await runtime.shutdown()
            throw error
        }
        try await runtime.shutdown()
    }

    /// An unused loopback port (bind to 0, read it back, release it).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
