// The sign-in benchmark: full authorization-code round trips of an app, then refresh grants alone.
import Crypto
import Foundation
import KeywardJOSE
import Synchronization

/// An app signing people in with the authorization code flow (issue 28). One signed-in browser session per
/// connection, a first-party public client (no consent page) whose codes and tokens are bound to the app's DPoP
/// key. A round trip is what the app and the browser do: `GET …/auth` with the session cookie (→ 303 with the code),
/// the code redeemed with its PKCE verifier and a DPoP proof (→ access, refresh and id token), then one refresh with
/// a proof (→ the next refresh token). Then every family's current refresh token is refreshed once more, all the
/// requests built beforehand: refresh grants alone. Per refresh the server verifies one ES256 proof, records its
/// `jti` and the token's generation in one grouped statement, signs one ES256 access token, and writes the family's
/// use with other refreshes' in one grouped statement.
struct AuthCodeScenario: Sendable {
    let baseURL: String
    let port: Int
    let cli: KeywardCLI
    let roundTrips: Int
    let concurrency: Int
    let threads: WorkerThreads
    let runner: LoadRunner
    let log: @Sendable (String) -> Void

    private var tokenPath: String { "/realms/demo/protocol/openid-connect/token" }
    private static let redirectURI = "http://127.0.0.1:8123/cb"

    func run() throws -> [ScenarioResult] {
        let tag = KeywardCLI.runTag
        let clientId = "bench-signin-\(tag)"
        log("auth code: first-party public client \(clientId), \(concurrency) users signed in")
        try cli.run(["clients", "create", "--realm", "demo", "--public", "--first-party", clientId, "--redirect-uri", "http://127.0.0.1/cb"])
        let cookies = try cli.signedInBrowsers("bench-signin-\(tag)", count: concurrency, port: port)
        let key = try SigningKey.generate(.es256)
        let thumbprint = key.publicJWK.thumbprint()

        log("auth code: \(max(1, roundTrips / concurrency) * concurrency) round trips (authorize → code → token → refresh), \(concurrency) at a time")
        let clock = ContinuousClock()
        let families = Mutex<[String]>([])
        let perUser = max(1, roundTrips / concurrency)
        let workers = cookies.map { cookie -> @Sendable () -> LoadRunner.Outcome in
            { [self] in
                var held: [String] = []
                let outcome = LoadRunner.Outcome.roundTrips(perUser, port: port, clock: clock) { connection in
                    held.append(try roundTrip(connection, cookie: cookie, clientId: clientId, key: key, thumbprint: thumbprint))
                }
                families.withLock { $0 += held }
                return outcome
            }
        }
        var results = [ScenarioResult(name: "sign-in round trip (auth code)", outcome: threads.run(workers))]
        results[0].notes = ["one round trip: authorize (signed-in session, no consent) + code → tokens with DPoP + one refresh"]

        let tokens = families.withLock { $0 }
        log("auth code: building \(tokens.count) refresh requests, one per family, each with a fresh proof")
        let requests = try tokens.map { token in
            RawHTTPConnection.request(
                method: "POST", path: tokenPath, port: port,
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("DPoP", try proof(key))],
                body: "grant_type=refresh_token&client_id=\(clientId)&refresh_token=\(token)"
            )
        }
        log("auth code: \(requests.count) refresh grants over \(concurrency) connections")
        results.append(ScenarioResult(name: "refresh grant (DPoP, rotating)", outcome: runner.run(requests, expecting: 200)))
        return results
    }

    private func proof(_ key: SigningKey) throws -> String {
        try DPoPProof.make(key: key, method: "POST", url: baseURL + tokenPath, issuedAt: Date())
    }

    /// authorize → 303 with the code → token → refresh; returns the family's current refresh token.
    private func roundTrip(_ connection: RawHTTPConnection, cookie: String, clientId: String, key: SigningKey, thumbprint: String) throws -> String {
        let verifier = Base64URL.encode(SecureRandom.bytes(32))
        let challenge = Base64URL.encode(SHA256.hash(data: Array(verifier.utf8)))
        let state = Base64URL.encode(SecureRandom.bytes(12))
        let redirect = Self.redirectURI.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let authorize = try connection.send(RawHTTPConnection.request(
            method: "GET",
            path: "/realms/demo/protocol/openid-connect/auth?response_type=code&client_id=\(clientId)&redirect_uri=\(redirect)&scope=openid"
                + "&state=\(state)&nonce=\(state)&code_challenge=\(challenge)&code_challenge_method=S256&dpop_jkt=\(thumbprint)",
            port: port, headers: [("Cookie", cookie)]
        ))
        guard authorize.status == 303, let location = authorize.header("location"), let code = URLComponents(string: location)?.queryItems?.first(where: { $0.name == "code" })?.value
        else { throw BenchError("authorize: \(authorize.status) \(authorize.header("location") ?? "")") }
        let issued = try connection.send(RawHTTPConnection.request(
            method: "POST", path: tokenPath, port: port,
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("DPoP", try proof(key))],
            body: "grant_type=authorization_code&client_id=\(clientId)&code=\(code)&code_verifier=\(verifier)&redirect_uri=\(redirect)"
        ))
        guard issued.status == 200, let first = try? StrictJSON.parseObject(issued.body), let refreshToken = first["refresh_token"]?.stringValue else {
            throw BenchError("code: \(issued.status) \(String(decoding: issued.body.prefix(300), as: UTF8.self))")
        }
        let refreshed = try connection.send(RawHTTPConnection.request(
            method: "POST", path: tokenPath, port: port,
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("DPoP", try proof(key))],
            body: "grant_type=refresh_token&client_id=\(clientId)&refresh_token=\(refreshToken)"
        ))
        guard refreshed.status == 200, let next = try? StrictJSON.parseObject(refreshed.body), let nextToken = next["refresh_token"]?.stringValue else {
            throw BenchError("refresh: \(refreshed.status) \(String(decoding: refreshed.body.prefix(300), as: UTF8.self))")
        }
        return nextToken
    }
}
