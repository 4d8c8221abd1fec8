// What a benchmark run reports: per-scenario throughput, latency and CPU, as a table and as JSON.
import Foundation

struct ScenarioResult: Codable {
    let name: String
    let requests: Int
    let failures: Int
    let seconds: Double
    let requestsPerSecond: Double
    let p50Milliseconds: Double
    let p99Milliseconds: Double
    /// CPU per successful request, in milliseconds: the server process's, and this load generator's.
    let serverCPUMilliseconds: Double?
    let generatorCPUMilliseconds: Double?
    let firstFailure: String?
    /// CPU per successful request of a peer process the scenario started (social-callback: the identity
    /// provider double), so it can be seen that the peer was not what was measured.
    var peerCPUMilliseconds: Double?
    /// Lines printed under the scenario's row: what exactly was measured (social-callback: first or returning
    /// sign-ins, the users created, the JWKS fetches).
    var notes: [String]?

    init(name: String, outcome: LoadRunner.Outcome) {
        self.name = name
        let sorted = outcome.latencies.sorted()
        requests = sorted.count
        failures = outcome.failures
        seconds = outcome.elapsed.seconds
        requestsPerSecond = Double(sorted.count - outcome.failures) / max(seconds, 1e-9)
        p50Milliseconds = Self.percentile(sorted, 0.50).seconds * 1000
        p99Milliseconds = Self.percentile(sorted, 0.99).seconds * 1000
        let succeeded = Double(max(1, sorted.count - outcome.failures))
        serverCPUMilliseconds = outcome.cpu.server.map { $0.seconds * 1000 / succeeded }
        generatorCPUMilliseconds = outcome.cpu.generator.map { $0.seconds * 1000 / succeeded }
        firstFailure = outcome.firstFailure
    }

    private static func percentile(_ sorted: [Duration], _ fraction: Double) -> Duration {
        guard !sorted.isEmpty else { return .zero }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
    }
}

struct BenchReport: Codable {
    let date: Date
    let cores: Int
    let database: String
    let requestsPerScenario: Int
    let concurrency: Int
    /// token, protected and host-token were sent in this many alternating turns (1: each whole, one after the other).
    let rounds: Int
    let generatorNice: Int32
    let ceiling: CryptoCeiling
    let scenarios: [ScenarioResult]
    /// In-process App Attest verification rates, when the app-attest scenario ran.
    let appAttest: AppAttestThroughput?

    func table() -> String {
        let withPeer = scenarios.contains { $0.peerCPUMilliseconds != nil }
        var lines = [
            "keyward-bench — \(cores) cores, \(database), \(concurrency) connections, \(requestsPerScenario) requests per scenario\(rounds > 1 ? " in \(rounds) alternating turns" : ""), loopback HTTP/1.1 keep-alive (one blocking client thread per connection, nice \(generatorNice)), no TLS",
            String(
                format: "crypto ceiling (1 core): ES256 verify %.0f/s, ES256 sign %.0f/s, RS256 (RSA-2048) verify %.0f/s, RS256 sign %.0f/s, ES384 verify %.0f/s, ES384 sign %.0f/s",
                ceiling.es256VerifyPerSecond, ceiling.es256SignPerSecond, ceiling.rs256VerifyPerSecond, ceiling.rs256SignPerSecond,
                ceiling.es384VerifyPerSecond, ceiling.es384SignPerSecond
            ),
        ]
        if !scenarios.isEmpty {
            lines += [
                "CPU ms/req: user + system time per successful request (server: the keyward process only, not a database server's)"
                    + (withPeer ? "; peer: a helper process the scenario started (social-callback: the provider double)" : ""),
                "",
                "scenario                            req/s     p50 ms   p99 ms   failures   CPU ms/req: server  load generator"
                    + (withPeer ? "    peer" : ""),
            ]
        }
        func cpu(_ milliseconds: Double?) -> String { milliseconds.map { String(format: "%.2f", $0) } ?? "-" }
        for result in scenarios {
            lines.append(
                result.name.padding(toLength: 34, withPad: " ", startingAt: 0)
                    + String(format: "%8.0f   %7.2f  %7.2f   %-8d", result.requestsPerSecond, result.p50Milliseconds, result.p99Milliseconds, result.failures)
                    + "   " + cpu(result.serverCPUMilliseconds).leftPadded(to: 18) + cpu(result.generatorCPUMilliseconds).leftPadded(to: 16)
                    + (withPeer ? cpu(result.peerCPUMilliseconds).leftPadded(to: 8) : "")
            )
            for note in result.notes ?? [] { lines.append("  " + note) }
            if let failure = result.firstFailure { lines.append("  first failure: \(failure.prefix(200))") }
        }
        if let appAttest {
            lines.append("App Attest, in process on 1 core (\(appAttest.vector)): " + String(
                format: "attestation verify %.0f/s, assertion verify %.0f/s", appAttest.attestationsPerSecond, appAttest.assertionsPerSecond
            ))
        }
        return lines.joined(separator: "\n")
    }

    func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
