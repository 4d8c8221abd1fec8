// keyward-bench's entry point: its options, the server it starts, the scenarios it runs.
import ArgumentParser
import Foundation

@main
struct KeywardBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyward-bench",
        abstract: "Measure Keyward's token endpoint, DPoP-protected requests, push-MFA login round trips, host-token exchanges, identity-provider callbacks and App Attest verification against the crypto ceiling.",
        discussion: """
            Starts `keyward serve --demo` (release build next to this binary, embedded SQLite, fresh data \
            directory, loopback) unless --url names a running demo server, measures the single-core ES256, \
            RS256 and ES384 ceilings, then runs each scenario and prints a table; --json writes the figures as JSON. \
            app-attest runs in this process and needs no server: `--scenarios app-attest` starts none. \
            social-callback is not in the default set: it starts tests/idp/social_callback_provider.py with the \
            Python in KEYWARD_TEST_PYTHON (default: the source tree's .venv/bin/python). The started server allows \
            provider callbacks from one address without limit (the load generator is one address).

            Build both first: swift build -c release --product keyward && swift build -c release --product keyward-bench
            """
    )

    @Option(help: "Base URL of a running server started with --demo, http://127.0.0.1:PORT (default: start one).")
    var url: String?

    @Option(help: "Path of the keyward binary to start (default: next to this binary).")
    var server: String?

    @Option(help: "Database URL for the started server (default: embedded SQLite in a temporary directory).")
    var database: String?

    @Option(name: .customLong("server-log"), help: "File the started server's log is written to (default: discarded).")
    var serverLog: String?

    @Option(help: "Requests per scenario.")
    var requests = 20_000

    @Option(help: "Concurrent connections.")
    var concurrency = 32

    @Option(help: "token, protected and host-token in this many alternating turns, each sending the next slice of its requests, so a shared machine's drift slows them alike (1: each scenario whole, one after the other). Every request is built before the first turn, and its DPoP proof must still be inside the proof window when sent (60 s at the token endpoint): keep --requests moderate.")
    var rounds = 1

    @Option(help: "Seconds the crypto ceiling is measured for.")
    var cryptoSeconds = 2.0

    @Option(help: "Write the results as JSON to this file.")
    var json: String?

    @Option(help: "Scenarios to run, comma-separated: token, protected, push-login, host-token, app-attest, social-callback, auth-code, broker, passkey, scim (default: all but social-callback, auth-code, broker, passkey and scim; with --url, token, protected and app-attest: push-login, host-token, social-callback, auth-code, broker, passkey and scim set up with the keyward CLI on the server's database). auth-code: --requests sign-in round trips (authorize, code, refresh), then one more refresh per family alone. broker: --requests relay round trips (relay, take, exchange). passkey: --requests usernameless sign-ins (options, assertion, session), one passkey per connection. scim: --scim-users creates with a SCIM token, then --requests filtered reads and --requests deactivations (PATCH active=false), --concurrency of them of users signed in from a browser.")
    var scenarios: String?

    private var scenarioNames: [String] {
        (scenarios ?? (url == nil ? "token,protected,push-login,host-token,app-attest" : "token,protected,app-attest"))
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    @Option(name: .customLong("app-attest-vector"), help: "app-attest: the App Attest vector file (YAML as in Tests/Fixtures/app-attest; default: veehaitch-ios-14.4.yaml of the source tree this binary was built from).")
    var appAttestVector: String?

    @Option(help: "push-login: concurrent logins (one user and device each).")
    var logins = 100

    @Option(name: .customLong("round-trips"), help: "push-login: total login round trips.")
    var roundTrips = 3000

    @Option(name: .customLong("login-rate"), help: "push-login: also start the round trips at this fixed rate per second (open loop, at most --logins at a time) and report their latency.")
    var loginRate: Double?

    @Option(help: "social-callback: distinct users; each signs in once for the first time (the first-sign-in measurement).")
    var subjects = 2000

    @Option(help: "social-callback: returning sign-ins, spread over the --subjects users (the second measurement).")
    var callbacks = 10_000

    @Option(name: .customLong("scim-users"), help: "scim: users created through SCIM before the reads and deactivations (the issue's target is with 100,000 present).")
    var scimUsers = 100_000

    @Option(name: .customLong("generator-nice"), help: "Nice value of the load generator's threads, 0...19: higher lets the server under test run first on shared cores (0: same priority).")
    var generatorNice: Int32 = 10

    func validate() throws {
        guard requests >= 100 else { throw ValidationError("--requests must be at least 100") }
        guard (1...1024).contains(concurrency) else { throw ValidationError("--concurrency must be 1...1024") }
        guard (1...100).contains(rounds) else { throw ValidationError("--rounds must be 1...100") }
        if rounds > 1 {
            guard requests / rounds >= concurrency else {
                throw ValidationError("--rounds \(rounds): every turn needs at least one request per connection (--requests / --rounds ≥ --concurrency)")
            }
            guard !Set(scenarioNames).isDisjoint(with: ["token", "protected", "host-token"]) else {
                throw ValidationError("--rounds applies to token, protected and host-token; none of them is in --scenarios")
            }
        }
        guard (1...400).contains(logins) else { throw ValidationError("--logins must be 1...400") }
        guard (0...19).contains(generatorNice) else { throw ValidationError("--generator-nice must be 0...19") }
        // Every flow is started before its measurement and its transaction cookie lives 10 minutes.
        guard (1...1_000_000).contains(scimUsers) else { throw ValidationError("--scim-users must be 1...1000000") }
        guard (1...100_000).contains(subjects) else { throw ValidationError("--subjects must be 1...100000") }
        guard (1...200_000).contains(callbacks) else { throw ValidationError("--callbacks must be 1...200000") }
        if let loginRate, !(1...10_000).contains(loginRate) { throw ValidationError("--login-rate must be 1...10000 round trips per second") }
        let known: Set<String> = ["token", "protected", "push-login", "host-token", "app-attest", "social-callback", "auth-code", "broker", "passkey", "scim"]
        let names = scenarioNames
        for name in names where !known.contains(name) {
            throw ValidationError("--scenarios: unknown scenario '\(name)' (token, protected, push-login, host-token, app-attest, social-callback, auth-code, broker, passkey, scim)")
        }
        if url != nil, let needsCLI = names.first(where: { ["push-login", "host-token", "social-callback", "auth-code", "broker", "passkey", "scim"].contains($0) }) {
            throw ValidationError("\(needsCLI) sets up with the keyward CLI on the server's database: let keyward-bench start the server (no --url)")
        }
        if names.contains("social-callback") {
            // Before the server starts and the ceiling is measured: no Python, no provider double.
            do { _ = try ProviderDoubleProcess.python() } catch { throw ValidationError("\(error)") }
        }
    }

    func run() async throws {
        let selected = Set(scenarioNames)
        let ceiling = measureCeiling()
        var results: [ScenarioResult] = []
        if !selected.subtracting(["app-attest"]).isEmpty {
            results = try await runHTTPScenarios(selected, ceiling: ceiling)
        }
        var appAttest: AppAttestThroughput?
        if selected.contains("app-attest") {
            let vector = appAttestVector.map { URL(fileURLWithPath: $0) } ?? AppAttestThroughput.defaultVector
            log("app-attest: verifying \(vector.lastPathComponent) in process (\(cryptoSeconds) s per operation, one core)")
            appAttest = try await AppAttestThroughput.measure(vectorFile: vector, seconds: cryptoSeconds)
        }

        let report = BenchReport(
            date: Date(), cores: ProcessInfo.processInfo.activeProcessorCount, database: database.map { $0.hasPrefix("postgres") ? "postgresql" : "sqlite" } ?? "sqlite",
            requestsPerScenario: requests, concurrency: concurrency, rounds: rounds, generatorNice: generatorNice, ceiling: ceiling, scenarios: results,
            appAttest: appAttest
        )
        print(report.table())
        if let json {
            try report.jsonData().write(to: URL(fileURLWithPath: json))
            log("wrote \(json)")
        }
    }

    private func measureCeiling() -> CryptoCeiling {
        log("measuring the crypto ceiling (\(cryptoSeconds) s per operation, one core)")
        let ceiling = CryptoCeiling.measure(seconds: cryptoSeconds)
        log(String(
            format: "ES256 verify %.0f/s, ES256 sign %.0f/s, RS256 (RSA-2048) verify %.0f/s, RS256 sign %.0f/s, ES384 verify %.0f/s, ES384 sign %.0f/s",
            ceiling.es256VerifyPerSecond, ceiling.es256SignPerSecond, ceiling.rs256VerifyPerSecond, ceiling.rs256SignPerSecond,
            ceiling.es384VerifyPerSecond, ceiling.es384SignPerSecond
        ))
        return ceiling
    }

    /// The scenarios that send HTTP to a server: the one at --url, or one started here and stopped at the end.
    private func runHTTPScenarios(_ selected: Set<String>, ceiling: CryptoCeiling) async throws -> [ScenarioResult] {
        let process: ServerProcess?
        let baseURL: String
        if let url {
            process = nil
            baseURL = url.hasSuffix("/") ? String(url.dropLast()) : url
        } else {
            let binary = server ?? ServerProcess.siblingBinary(named: "keyward")
            log("starting \(binary) serve --demo")
            let started = try await ServerProcess.start(binary: binary, database: database, log: serverLog)
            process = started
            baseURL = started.baseURL
        }
        defer { process?.stop() }

        guard let port = URLComponents(string: baseURL)?.port, baseURL.hasPrefix("http://127.0.0.1:") else {
            throw ValidationError("--url must be http://127.0.0.1:PORT (the load generator speaks plain HTTP on loopback)")
        }
        let threads = WorkerThreads(meter: CPUMeter(serverPID: process?.processIdentifier), nice: generatorNice)
        let workloads = Scenarios(baseURL: baseURL, port: port, requests: requests, log: log)
        // validate() refused the CLI's scenarios with --url, so a server was started here and the CLI can reach its database.
        let cli = KeywardCLI(
            binary: server ?? ServerProcess.siblingBinary(named: "keyward"), baseURL: baseURL, database: database,
            dataDirectory: process?.dataDirectory.path
        )
        let turns = LoadTurns(runner: LoadRunner(port: port, concurrency: concurrency, threads: threads), log: log)
        let hostTokens = HostTokenScenario(baseURL: baseURL, port: port, requests: requests, cli: cli, log: log)
        func whole(_ prepare: () throws -> PreparedLoad) throws -> [ScenarioResult] {
            let load = try prepare()
            log("\(load.name): \(load.requests.count) requests over \(concurrency) connections")
            return turns.run([load], rounds: 1)
        }
        var results: [ScenarioResult] = []
        if rounds > 1 {
            // Built slowest first (host tokens are RS256-signed), so the token endpoint's proofs, built last, are the
            // freshest when the turns start; sent in the usual order.
            let started = ContinuousClock.now
            let hostTokenLoad = selected.contains("host-token") ? try hostTokens.prepare() : nil
            let protectedLoad = selected.contains("protected") ? try workloads.protectedResource() : nil
            let tokenEndpointLoad = selected.contains("token") ? try workloads.tokenEndpoint() : nil
            let loads = [tokenEndpointLoad, protectedLoad, hostTokenLoad].compactMap { $0 }
            let preparation = ContinuousClock.now - started
            if preparation > .seconds(20) {
                log("building took \(Int(preparation.seconds)) s: the earliest proofs may leave the token endpoint's 60 s window during the turns (fewer --requests?)")
            }
            log("\(loads.map(\.name).joined(separator: ", ")): \(requests) requests each over \(concurrency) connections, in \(rounds) turns")
            results += turns.run(loads, rounds: rounds)
        } else {
            if selected.contains("token") { results += try whole(workloads.tokenEndpoint) }
            if selected.contains("protected") { results += try whole(workloads.protectedResource) }
        }
        if selected.contains("push-login") {
            results += try await PushLoginScenario(baseURL: baseURL, port: port, cli: cli, concurrency: logins, threads: threads, log: log)
                .run(paces: PushLoginScenario.paces(roundTrips: roundTrips, concurrency: logins, rate: loginRate))
        }
        if rounds == 1, selected.contains("host-token") { results += try whole(hostTokens.prepare) }
        if selected.contains("auth-code") {
            results += try AuthCodeScenario(
                baseURL: baseURL, port: port, cli: cli, roundTrips: requests, concurrency: concurrency, threads: threads,
                runner: LoadRunner(port: port, concurrency: concurrency, threads: threads), log: log
            ).run()
        }
        if selected.contains("broker") {
            results += try BrokerScenario(
                baseURL: baseURL, port: port, cli: cli, roundTrips: requests, concurrency: concurrency, threads: threads, log: log
            ).run()
        }
        if selected.contains("passkey") {
            results += try PasskeyScenario(
                baseURL: baseURL, port: port, cli: cli, roundTrips: requests, concurrency: concurrency, threads: threads, ceiling: ceiling, log: log
            ).run()
        }
        if selected.contains("scim") {
            results += try SCIMScenario(
                baseURL: baseURL, port: port, cli: cli, population: scimUsers, requests: requests, concurrency: concurrency, threads: threads, log: log
            ).run()
        }
        if selected.contains("social-callback") {
            results += try SocialCallbackScenario(
                baseURL: baseURL, port: port, subjects: subjects, callbacks: callbacks, concurrency: concurrency, cli: cli, threads: threads,
                ceiling: ceiling, log: log
            ).run()
        }
        return results
    }

    private func log(_ message: String) {
        FileHandle.standardError.write(Data("[keyward-bench] \(message)\n".utf8))
    }
}
