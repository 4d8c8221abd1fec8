// The identity-provider callback benchmark: first and returning sign-ins against a provider double.
import Foundation
import Synchronization

/// Identity-provider callbacks (issue 17): `GET /realms/demo/v1/auth/{alias}/callback?code=…&state=…&iss=…` with
/// the flow's transaction cookie, as a browser comes back from an OpenID provider. Per callback the server opens
/// the AEAD transaction cookie, spends its state once, exchanges the code at the provider's token endpoint (PKCE
/// verifier, client secret), verifies the RS256 id_token against the provider's cached JWK Set, finds or creates
/// the user and their identity, and stores a browser session: 303 with the session cookie.
///
/// The provider is tests/idp/social_callback_provider.py in its own process. Nothing it does while the clock runs
/// signs: each flow is started before the measurement (Keyward's start route, then the double's /authorize, which
/// signs that flow's id_token then), and its /token answers from memory. Its CPU time during the measurement is
/// reported beside the server's.
///
/// Two measurements with the same users: `subjects` callbacks that are each a user's first sign-in (provisioning),
/// then `callbacks` returning sign-ins spread over those users. A few warm-up flows by other users come first, so
/// the provider's discovery document and keys are cached (a warm JWKS cache) and its connections are open.
struct SocialCallbackScenario: Sendable {
    let baseURL: String
    let port: Int
    let subjects: Int
    let callbacks: Int
    let concurrency: Int
    let cli: KeywardCLI
    let threads: WorkerThreads
    let ceiling: CryptoCeiling
    let log: @Sendable (String) -> Void

    static let warmUpFlows = 20
    private static let clientId = "keyward-bench"
    private static let returnPath = "/realms/demo/account"

    func run() throws -> [ScenarioResult] {
        let tag = KeywardCLI.runTag
        // Per run: on PostgreSQL the provider and the users outlive the server the bench started.
        let alias = "bench-\(tag)"
        log("social callback: starting \(ProviderDoubleProcess.script.lastPathComponent)")
        let provider = try ProviderDoubleProcess(clientId: Self.clientId, nice: threads.nice)
        defer {
            if let exit = provider.stop() { log("social callback: provider double stopped: \(exit)") }
        }
        let secretFile = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-bench-secret-\(UUID().uuidString)")
        try Data("bench-client-secret-\(tag)".utf8).write(to: secretFile)
        defer { try? FileManager.default.removeItem(at: secretFile) }
        log("social callback: provider \(alias) (oidc, issuer \(provider.issuer)) in realm demo")
        try cli.run([
            "providers", "add", "--realm", "demo", alias, "--type", "oidc", "--issuer", provider.issuer, "--client-id", Self.clientId,
            "--client-secret-file", secretFile.path,
        ])
        let flows = Flows(keywardPort: port, baseURL: baseURL, alias: alias, provider: provider, returnPath: Self.returnPath)

        // Warm-up, by users of its own: discovery and JWK Set fetched and cached, connections to the provider open.
        let warmUp = try prepare((0..<Self.warmUpFlows).map { "bench-\(tag)-warm-\($0)" }, flows: flows, what: "warm-up")
        let connection = try RawHTTPConnection(port: port)
        for request in warmUp {
            let answer = try connection.send(request)
            guard answer.status == 303, answer.header("location")?.hasSuffix(Self.returnPath) == true,
                answer.headers.contains(where: { $0.name == "set-cookie" && $0.value.hasPrefix("keyward-session=") })
            else {
                throw BenchError("social callback: a warm-up callback answered \(answer.status), not 303 to \(Self.returnPath) with a session cookie: \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
            }
        }

        let users = (0..<subjects).map { "bench-\(tag)-user-\($0)" }
        let before = try userCount()
        var first = try measure(
            name: "social callback, first sign-in", subjects: users, flows: flows, provider: provider
        )
        let afterFirst = try userCount()
        var returning = try measure(
            name: "social callback, returning", subjects: (0..<callbacks).map { users[$0 % users.count] }, flows: flows, provider: provider
        )
        let afterReturning = try userCount()

        first.notes = [
            "\(users.count) callbacks, each a user's first sign-in (user and identity created): users in realm demo +\(afterFirst - before) (expected \(users.count))",
        ] + (first.notes ?? [])
        returning.notes = [
            "\(callbacks) callbacks by the \(min(users.count, callbacks)) users above signing in again: users in realm demo +\(afterReturning - afterFirst) (expected 0)",
        ] + (returning.notes ?? [])
        if afterFirst - before != users.count || afterReturning != afterFirst {
            log("social callback: WARNING: users created \(afterFirst - before) by the first sign-ins (expected \(users.count)) and \(afterReturning - afterFirst) by the returning ones (expected 0)")
        }
        return [first, returning]
    }

    /// Prepares one callback per subject, then sends them over `concurrency` connections with the double's CPU
    /// counted from the start of the measurement.
    private func measure(name: String, subjects: [String], flows: Flows, provider: ProviderDoubleProcess) throws -> ScenarioResult {
        let prepared = try prepare(subjects, flows: flows, what: name)
        try provider.mark()
        log("social callback: \(prepared.count) callbacks (\(name)) over \(concurrency) connections")
        let outcome = LoadRunner(port: port, concurrency: concurrency, threads: threads).run(prepared, expecting: 303)
        let peer = try provider.cpu()
        var result = ScenarioResult(name: name, outcome: outcome)
        let succeeded = Double(max(1, outcome.latencies.count - outcome.failures))
        result.peerCPUMilliseconds = peer.cpuSecondsSinceMark * 1000 / succeeded
        let rsaMilliseconds = 1000 / ceiling.rs256VerifyPerSecond
        result.notes = [
            "provider double during the run: \(String(format: "%.2f", peer.cpuSecondsSinceMark)) s CPU, \(peer.tokenRequestsSinceMark) token requests, \(peer.jwksRequestsSinceMark) JWKS fetches (0: the key cache stayed warm)",
            String(format: "one RS256 (RSA-2048) verification per callback: %.4f ms at the ceiling of %.0f/s on one core", rsaMilliseconds, ceiling.rs256VerifyPerSecond)
                + (result.serverCPUMilliseconds.map { String(format: ", %.1f %% of the server's CPU per callback", rsaMilliseconds / $0 * 100) } ?? ""),
        ]
        if peer.jwksRequestsSinceMark > 0 { log("social callback: the server fetched the provider's JWKS \(peer.jwksRequestsSinceMark) times during \(name) (expected 0: it caches it)") }
        return result
    }

    /// The users of realm demo, counted with `keyward users list` (one line each).
    private func userCount() throws -> Int {
        try cli.run(["users", "list", "--realm", "demo"]).split(separator: "\n").filter { $0.contains("\t") }.count
    }

    /// One started flow per subject, in order, on a few threads (the start route and the double's /authorize, whose
    /// RSA signature is the slow part, are both waited on): the callback request with its cookie.
    private func prepare(_ subjects: [String], flows: Flows, what: String) throws -> [[UInt8]] {
        log("social callback: starting \(subjects.count) sign-ins (\(what)): Keyward's start route, then the provider's /authorize, which signs")
        let workers = min(8, max(1, subjects.count))
        let done = Atomic<Int>(0)
        let results = Mutex<[Int: Result<[[UInt8]], any Error>]>([:])
        let group = DispatchGroup()
        for worker in 0..<workers {
            group.enter()
            let thread = Thread {
                let result = Result { () throws -> [[UInt8]] in
                    let keyward = try RawHTTPConnection(port: flows.keywardPort)
                    let double = try RawHTTPConnection(port: flows.provider.port)
                    return try stride(from: worker, to: subjects.count, by: workers).map { index in
                        let request = try flows.callbackRequest(subject: subjects[index], keyward: keyward, provider: double)
                        let finished = done.wrappingAdd(1, ordering: .relaxed).newValue
                        if finished % 2000 == 0 { log("social callback: \(finished)/\(subjects.count) sign-ins started") }
                        return request
                    }
                }
                results.withLock { $0[worker] = result }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        let perWorker = try results.withLock { all in try (0..<workers).map { try all[$0]!.get() } }
        // Worker w made indices w, w + workers, …: back into subject order.
        return (0..<subjects.count).map { perWorker[$0 % workers][$0 / workers] }
    }

    /// How one sign-in is started, up to the callback the browser would then send.
    struct Flows: Sendable {
        let keywardPort: Int
        let baseURL: String
        let alias: String
        let provider: ProviderDoubleProcess
        let returnPath: String

        /// Keyward's start route (302 to the provider, the transaction cookie), the provider's /authorize for
        /// `subject` (302 back with code, state and iss), and the callback request those make.
        func callbackRequest(subject: String, keyward: RawHTTPConnection, provider double: RawHTTPConnection) throws -> [UInt8] {
            let started = try keyward.send(RawHTTPConnection.request(
                method: "GET", path: "/realms/demo/v1/auth/\(alias)?return=\(returnPath)", port: keywardPort, headers: []
            ))
            guard started.status == 302, let authorize = started.header("location"), authorize.hasPrefix(provider.baseURL + "/authorize?"),
                let cookie = started.cookie, cookie.hasPrefix("keyward-signin-")
            else {
                throw BenchError("social callback: the start route answered \(started.status), not 302 to the provider with a transaction cookie: \(String(decoding: started.body.prefix(300), as: UTF8.self))")
            }
            // The double signs in the login_hint; subjects are made of URL-safe characters.
            let authorized = try double.send(RawHTTPConnection.request(
                method: "GET", path: String(authorize.dropFirst(provider.baseURL.count)) + "&login_hint=\(subject)", port: provider.port, headers: []
            ))
            guard authorized.status == 302, let callback = authorized.header("location"), callback.hasPrefix(baseURL + "/realms/demo/v1/auth/\(alias)/callback?") else {
                throw BenchError("social callback: the provider's /authorize answered \(authorized.status): \(String(decoding: authorized.body.prefix(300), as: UTF8.self))")
            }
            return RawHTTPConnection.request(method: "GET", path: String(callback.dropFirst(baseURL.count)), port: keywardPort, headers: [("Cookie", cookie)])
        }
    }
}
