// The SCIM benchmark: a company's directory provisioning a realm, as Entra ID and Okta do it.
import Foundation
import KeywardJOSE
import Synchronization

/// A directory's traffic on `/scim/v2/realms/demo` with one SCIM token (issue 33), in three measurements:
/// - creates: `POST /Users` of `population` users (userName, name, one email, externalId), until that many are
///   present;
/// - filtered reads: `GET /Users?filter=…` with `userName eq` and `externalId eq` in turn (the lookups a directory
///   makes before it writes), each finding one of the population;
/// - deactivations: `PATCH /Users/{id}` with `replace active false` (Entra ID's shape), each ending the user's
///   sessions. `concurrency` of the users are signed in from a browser first, and afterwards their sessions must be
///   gone: the measurement counts real session ends, not only rows flipped.
struct SCIMScenario: Sendable {
    let baseURL: String
    let port: Int
    let cli: KeywardCLI
    let population: Int
    let requests: Int
    let concurrency: Int
    let threads: WorkerThreads
    let log: @Sendable (String) -> Void

    private static let base = "/scim/v2/realms/demo"
    private static let patchDeactivate = #"{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"active","value":false}]}"#

    func run() throws -> [ScenarioResult] {
        let tag = KeywardCLI.runTag
        let token = try scimToken(tag)
        let signedIn = try cli.signedInBrowsers("bench-scim-\(tag)-signed-in", count: concurrency, port: port)

        log("scim: creating \(population) users over \(concurrency) connections")
        let created = Atomic<Int>(0)
        var createResult = ScenarioResult(name: "SCIM create", outcome: measure(population) { [self] connection, index in
            try create(connection, index: index, tag: tag, token: token)
            let done = created.wrappingAdd(1, ordering: .relaxed).newValue
            if done % 10_000 == 0 { log("scim: \(done)/\(population) users created") }
        })
        createResult.notes = ["POST /Users: userName, name, one email, externalId; the realm grows to \(population) users and more"]

        // Reads spread over the whole population (the n-th finds user n × population / reads); each answer's id is
        // kept for a deactivation.
        let reads = min(requests, population)
        log("scim: \(reads) filtered reads (userName eq, externalId eq) among \(population) users")
        let found = Mutex<[String]>([])
        var readResult = ScenarioResult(name: "SCIM filtered read", outcome: measure(reads) { [self] connection, index in
            let id = try lookUp(connection, index: index * population / reads, byExternalId: index % 2 == 1, tag: tag, token: token)
            found.withLock { $0.append(id) }
        })
        readResult.notes = ["GET /Users?filter=userName eq \"…\" and externalId eq \"…\" in turn, one user found among \(population)"]

        var targets = try signedIn.indices.map { index in
            try lookUpSignedIn(index, tag: tag, token: token)
        }
        targets += found.withLock { $0 }.prefix(max(0, requests - targets.count))
        guard try signedIn.allSatisfy({ try accountStatus($0) == 200 }) else {
            throw BenchError("scim: a signed-in browser's session did not open its account page before the deactivations")
        }
        log("scim: \(targets.count) deactivations (PATCH active=false), \(signedIn.count) of them of users signed in")
        let ids = targets
        var deactivateResult = ScenarioResult(name: "SCIM deactivate", outcome: measure(ids.count) { [self] connection, index in
            try deactivate(connection, id: ids[index], token: token)
        })
        let stillOpen = try signedIn.filter { try accountStatus($0) == 200 }.count
        guard stillOpen == 0 else { throw BenchError("scim: \(stillOpen) of \(signedIn.count) sessions of deactivated users still open their account page") }
        deactivateResult.notes = ["PATCH /Users/{id} replace active false; \(signedIn.count) of the users had a browser session, checked ended afterwards"]
        return [createResult, readResult, deactivateResult]
    }

    /// `count` round trips over `concurrency` connections, each connection taking the next share of the indices.
    private func measure(_ count: Int, _ roundTrip: @escaping @Sendable (RawHTTPConnection, Int) throws -> Void) -> LoadRunner.Outcome {
        let clock = ContinuousClock()
        let workers = (0..<concurrency).map { worker -> @Sendable () -> LoadRunner.Outcome in
            let mine = LoadRunner.share(of: count, part: worker, parts: concurrency)
            return { [port] in
                var next = mine.lowerBound
                return LoadRunner.Outcome.roundTrips(mine.count, port: port, clock: clock) { connection in
                    defer { next += 1 }
                    try roundTrip(connection, next)
                }
            }
        }
        return threads.run(workers)
    }

    /// A SCIM token for the demo realm, made with the CLI: its output's line that starts with the token prefix.
    private func scimToken(_ tag: String) throws -> String {
        let output = try cli.run(["scim-tokens", "create", "--realm", "demo", "--name", "bench-\(tag)"])
        guard let token = output.split(separator: "\n").first(where: { $0.hasPrefix("kwscim_") }) else {
            throw BenchError("scim: keyward scim-tokens create printed no token: \(output.prefix(300))")
        }
        return String(token)
    }

    private func headers(_ token: String, json: Bool = false) -> [(String, String)] {
        [("Authorization", "Bearer \(token)")] + (json ? [("Content-Type", "application/scim+json")] : [])
    }

    private func create(_ connection: RawHTTPConnection, index: Int, tag: String, token: String) throws {
        let name = "bench-\(tag)-\(index)"
        let body = """
            {"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"\(name)","externalId":"ext-\(tag)-\(index)",\
            "name":{"givenName":"Bench","familyName":"User \(index)"},"displayName":"Bench User \(index)",\
            "emails":[{"value":"\(name)@bench.example","type":"work","primary":true}],"active":true}
            """
        let answer = try connection.send(RawHTTPConnection.request(method: "POST", path: Self.base + "/Users", port: port, headers: headers(token, json: true), body: body))
        guard answer.status == 201 else { throw BenchError("create: \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))") }
    }

    /// The id of the one user the filter finds.
    private func lookUp(_ connection: RawHTTPConnection, index: Int, byExternalId: Bool, tag: String, token: String) throws -> String {
        let filter = byExternalId ? "externalId eq \"ext-\(tag)-\(index)\"" : "userName eq \"bench-\(tag)-\(index)\""
        return try findOne(connection, filter: filter, token: token)
    }

    private func lookUpSignedIn(_ index: Int, tag: String, token: String) throws -> String {
        try findOne(try RawHTTPConnection(port: port), filter: "userName eq \"bench-scim-\(tag)-signed-in-\(index)\"", token: token)
    }

    private func findOne(_ connection: RawHTTPConnection, filter: String, token: String) throws -> String {
        let query = filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let answer = try connection.send(RawHTTPConnection.request(method: "GET", path: Self.base + "/Users?filter=\(query)", port: port, headers: headers(token)))
        guard answer.status == 200, let list = try? StrictJSON.parseObject(answer.body), list["totalResults"]?.numberValue == 1,
            let id = list["Resources"]?.arrayValue?.first?.objectValue?["id"]?.stringValue
        else { throw BenchError("filtered read (\(filter)): \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))") }
        return id
    }

    private func deactivate(_ connection: RawHTTPConnection, id: String, token: String) throws {
        let answer = try connection.send(RawHTTPConnection.request(
            method: "PATCH", path: Self.base + "/Users/\(id)", port: port, headers: headers(token, json: true), body: Self.patchDeactivate
        ))
        guard answer.status == 200 else { throw BenchError("deactivate: \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))") }
    }

    /// The account page's status for a browser's session cookie: 200 while the session lasts.
    private func accountStatus(_ cookie: String) throws -> Int {
        try RawHTTPConnection(port: port).send(RawHTTPConnection.request(
            method: "GET", path: "/realms/demo/account", port: port, headers: [("Cookie", cookie)]
        )).status
    }
}
