// The host-token benchmark: JWT bearer grants with DPoP proofs, as an app exchanges its auth provider's token.
import Foundation
import KeywardJOSE
import Synchronization

/// Host-token exchanges: the JWT bearer grant (RFC 7523 §2.1) at the token endpoint with a DPoP proof (RFC 9449),
/// as an app would send its own auth provider's RS256 token for its user. Per exchange the server verifies one
/// RS256 host token and one ES256 proof, records two single-use ids (the host token's `jti` and the proof's) and
/// signs one ES256 access token. Set up with the `keyward` CLI on the started server's database: a public client,
/// an issuer bound to it whose JWK Set this process serves on loopback, and `enrolledIds` enterprise ids.
struct HostTokenScenario: Sendable {
    let baseURL: String
    let port: Int
    let requests: Int
    let cli: KeywardCLI
    let log: @Sendable (String) -> Void

    /// Host tokens name these enrolled users in turn. The server reads the user behind each token with one indexed
    /// query whatever its id (nothing per user is cached), so the count does not change the work; a hundred
    /// distinct subjects make the traffic look like many users' apps rather than one replaying itself.
    static let enrolledIds = 100

    private var tokenPath: String { "/realms/demo/protocol/openid-connect/token" }
    private static let grantType = "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"

    /// Sets the issuer up, warms the server's key cache and builds every exchange; the JWKS responder keeps serving
    /// until the load's `finished`.
    func prepare() throws -> PreparedLoad {
        let tag = KeywardCLI.runTag
        let issuer = "https://auth-\(tag).host.invalid"
        let clientId = "bench-app-\(tag)"
        let subjects = (0..<Self.enrolledIds).map { "bench-\(tag)-employee-\($0)" }
        let hostKey = try SigningKey.generate(.rs256)
        var jwk = hostKey.publicJWK
        jwk.kid = "k1"
        let responder = try JWKSResponder(jwks: StrictJSON.serialize(JWKSet(keys: [jwk]).jsonObject))
        var handedOver = false
        defer { if !handedOver { responder.stop() } }

        log("host token: public client \(clientId), issuer \(issuer) with its JWKS at \(responder.url), \(subjects.count) enterprise ids")
        try cli.run(["clients", "create", "--realm", "demo", "--public", clientId])
        try cli.run(["issuers", "add", "--realm", "demo", issuer, "--jwks-url", responder.url, "--clients", clientId])
        try cli.run(["issuers", "enroll", "--realm", "demo", issuer] + subjects)

        let audience = baseURL + "/realms/demo"
        @Sendable func hostToken(_ index: Int) throws -> String {
            let now = Date().timeIntervalSince1970.rounded(.down)
            return try JWS.sign(header: ["typ": "JWT", "kid": "k1"], claims: [
                "iss": .string(issuer), "sub": .string(subjects[index % subjects.count]), "aud": .string(audience),
                "iat": .number(now), "exp": .number(now + 300), "jti": .string(SecureRandom.uuidString()),
            ], key: hostKey)
        }
        let dpopKey = try SigningKey.generate(.es256)
        @Sendable func exchange(_ assertion: String) throws -> [UInt8] {
            let proof = try DPoPProof.make(key: dpopKey, method: "POST", url: baseURL + tokenPath, issuedAt: Date())
            return RawHTTPConnection.request(
                method: "POST", path: tokenPath, port: port,
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("DPoP", proof)],
                body: "grant_type=\(Self.grantType)&client_id=\(clientId)&assertion=\(assertion)"
            )
        }

        // One exchange first: the server fetches and caches the issuer's keys, so the measurement sees a warm cache
        // (and a broken set-up fails before the minting).
        let warm = try RawHTTPConnection(port: port).send(try exchange(try hostToken(0)))
        guard warm.status == 200, let answer = try? StrictJSON.parseObject(warm.body), answer["access_token"]?.stringValue != nil,
            answer["token_type"]?.stringValue == "DPoP"
        else {
            throw BenchError("host token: the warm-up exchange failed: \(warm.status) \(String(decoding: warm.body.prefix(300), as: UTF8.self))")
        }

        // Host tokens first (RSA signing, the slow part), then the proofs, whose iat must stay inside the token
        // endpoint's proof window until the run ends.
        let assertions = try mint(requests, what: "host tokens (RS256)") { try hostToken($0) }
        let prepared = try mint(requests, what: "DPoP proofs") { try exchange(assertions[$0]) }
        handedOver = true
        return PreparedLoad(name: "host token (jwt-bearer + DPoP)", requests: prepared, expecting: 200) { [log] in
            if responder.fetches != 1 { log("host token: the server fetched the JWKS \(responder.fetches) times (expected once: it caches it)") }
            responder.stop()
        }
    }

    /// `count` items made on every core before the measurement (no server work is running then), in index order,
    /// with progress every 5,000.
    private func mint<T: Sendable>(_ count: Int, what: String, _ make: @Sendable (Int) throws -> T) throws -> [T] {
        log("host token: minting \(count) \(what)")
        let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let done = Atomic<Int>(0)
        let results = Mutex<[Int: Result<[T], any Error>]>([:])
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let result = Result { () throws -> [T] in
                try stride(from: worker, to: count, by: workers).map { index in
                    let item = try make(index)
                    let finished = done.wrappingAdd(1, ordering: .relaxed).newValue
                    if finished % 5000 == 0 { log("host token: \(finished)/\(count) \(what)") }
                    return item
                }
            }
            results.withLock { $0[worker] = result }
        }
        let perWorker = try results.withLock { all in try (0..<workers).map { try all[$0]!.get() } }
        // Worker w made indices w, w + workers, …: interleave them back into index order.
        return (0..<count).map { perWorker[$0 % workers][$0 / workers] }
    }
}
