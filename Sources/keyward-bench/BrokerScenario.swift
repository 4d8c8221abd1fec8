// The broker benchmark: full relay round trips of a native app, from the relay to a token bound to its session key.
import Foundation
import KeywardJOSE
import Synchronization

/// A native app getting a delegation for its session key through the relay (issue 29). One signed-in browser
/// session and one session key per connection, a first-party broker app with a claimed https return address (no
/// consent page for the returning user). A round trip: `GET …/auth/relay` with the session cookie (→ 303 to the
/// return address with `#code=…&nonce=…`; the server signs a delegation and stores the hand-off), the take with a
/// proof by the session key (→ the delegation, deleted), and the jwt-bearer exchange with a proof by the same key
/// (→ a DPoP-bound access token). The server's crypto per round trip: three P-256 verifications (the take's proof,
/// the delegation, the exchange's proof) and two ES256 signatures (the delegation, the access token).
struct BrokerScenario: Sendable {
    let baseURL: String
    let port: Int
    let cli: KeywardCLI
    let roundTrips: Int
    let concurrency: Int
    let threads: WorkerThreads
    let log: @Sendable (String) -> Void

    private static let returnURL = "https://app.bench.test/broker"
    private var takePath: String { "/realms/demo/v1/broker/handoff/take" }
    private var tokenPath: String { "/realms/demo/protocol/openid-connect/token" }

    func run() throws -> [ScenarioResult] {
        let tag = KeywardCLI.runTag
        let clientId = "bench-broker-\(tag)"
        log("broker: first-party broker app \(clientId) returning to \(Self.returnURL), \(concurrency) users signed in")
        try cli.run(["clients", "create", "--realm", "demo", "--public", "--first-party", "--broker", clientId, "--redirect-uri", Self.returnURL])
        let cookies = try cli.signedInBrowsers("bench-broker-\(tag)", count: concurrency, port: port)
        let perUser = max(1, roundTrips / concurrency)
        log("broker: \(perUser * concurrency) round trips (relay → hand-off → take → exchange), \(concurrency) at a time")
        let clock = ContinuousClock()
        let workers = try cookies.map { cookie -> @Sendable () -> LoadRunner.Outcome in
            let key = try SigningKey.generate(.es256)
            let publicKey = Base64URL.encode(StrictJSON.serialize(key.publicJWK.requiredMembers))
            return { [self] in
                LoadRunner.Outcome.roundTrips(perUser, port: port, clock: clock) { connection in
                    try roundTrip(connection, cookie: cookie, clientId: clientId, key: key, publicKey: publicKey)
                }
            }
        }
        var result = ScenarioResult(name: "broker round trip", outcome: threads.run(workers))
        result.notes = ["one round trip: relay (signed-in session, no consent) → hand-off → take with DPoP → jwt-bearer exchange with DPoP", "server crypto per round trip: 3 P-256 verifications, 2 ES256 signatures (delegation, access token)"]
        return [result]
    }

    private func proof(_ key: SigningKey, path: String) throws -> String {
        try DPoPProof.make(key: key, method: "POST", url: baseURL + path, issuedAt: Date())
    }

    private func roundTrip(_ connection: RawHTTPConnection, cookie: String, clientId: String, key: SigningKey, publicKey: String) throws {
        let nonce = Base64URL.encode(SecureRandom.bytes(18))
        let returnURL = Self.returnURL.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let relay = try connection.send(RawHTTPConnection.request(
            method: "GET", path: "/realms/demo/auth/relay?client_id=\(clientId)&nonce=\(nonce)&publicKey=\(publicKey)&return=\(returnURL)",
            port: port, headers: [("Cookie", cookie)]
        ))
        guard relay.status == 303, let location = relay.header("location"), location.hasPrefix(Self.returnURL + "#code="),
            let code = RawHTTPConnection.between(Array(location.utf8), "#code=", "&")
        else { throw BenchError("relay: \(relay.status) \(relay.header("location") ?? "")") }
        let taken = try connection.send(RawHTTPConnection.request(
            method: "POST", path: takePath, port: port, headers: [("Content-Type", "application/json"), ("DPoP", try proof(key, path: takePath))],
            body: #"{"code":"\#(code)","nonce":"\#(nonce)"}"#
        ))
        guard taken.status == 200, let delegation = (try? StrictJSON.parseObject(taken.body))?["value"]?.stringValue else {
            throw BenchError("take: \(taken.status) \(String(decoding: taken.body.prefix(300), as: UTF8.self))")
        }
        let exchanged = try connection.send(RawHTTPConnection.request(
            method: "POST", path: tokenPath, port: port,
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("DPoP", try proof(key, path: tokenPath))],
            body: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&client_id=\(clientId)&assertion=\(delegation)"
        ))
        guard exchanged.status == 200 else { throw BenchError("exchange: \(exchanged.status) \(String(decoding: exchanged.body.prefix(300), as: UTF8.self))") }
    }
}
