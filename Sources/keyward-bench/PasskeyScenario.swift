// The passkey benchmark: usernameless sign-ins, from the options to the session.
import Crypto
import Foundation
import KeywardJOSE
import KeywardWire

/// Passkey sign-ins without a username (issue 31), as a native app makes them with no cookie yet. One passkey per
/// connection, registered before the clock starts through the account's JSON endpoints. A round trip:
/// `POST …/webauthn/authentication/options` (→ a sealed challenge, a sign-in state cookie and its CSRF token),
/// the assertion signed here (ES256, counter 0 as synced passkeys send), and `POST …/webauthn/authentication`
/// (→ 200 with the session cookie). The server's crypto per sign-in: one AES-GCM seal and one open of the
/// challenge, one HMAC of the state, one P-256 verification; its writes: the challenge spent, the passkey's use,
/// the session, the audit event.
struct PasskeyScenario: Sendable {
    let baseURL: String
    let port: Int
    let cli: KeywardCLI
    let roundTrips: Int
    let concurrency: Int
    let threads: WorkerThreads
    let ceiling: CryptoCeiling
    let log: @Sendable (String) -> Void

    private static let base = "/realms/demo/webauthn"

    /// A passkey held in memory: the key, its id, its user handle, the RP ID.
    struct Passkey: Sendable {
        let key: P256.Signing.PrivateKey
        let id: String
        let userHandle: String
        let rpID: String
    }

    func run() throws -> [ScenarioResult] {
        let tag = KeywardCLI.runTag
        try cli.run(["realms", "update", "demo", "--passkeys", "optional"])
        let cookies = try cli.signedInBrowsers("bench-passkey-\(tag)", count: concurrency, port: port)
        log("passkey: registering \(cookies.count) passkeys, one per connection")
        let passkeys = try cookies.map { try register(cookie: $0) }
        let perUser = max(1, roundTrips / concurrency)
        log("passkey: \(perUser * concurrency) sign-ins (options → assertion → session), \(concurrency) at a time")
        let clock = ContinuousClock()
        let workers = passkeys.map { passkey -> @Sendable () -> LoadRunner.Outcome in
            { [self] in LoadRunner.Outcome.roundTrips(perUser, port: port, clock: clock) { try signIn($0, with: passkey) } }
        }
        var result = ScenarioResult(name: "passkey sign-in (usernameless)", outcome: threads.run(workers))
        let verifyMilliseconds = 1000 / ceiling.es256VerifyPerSecond
        result.notes = [
            "one sign-in: options (no cookie) → ES256 assertion signed by the generator → authentication → session cookie",
            String(format: "one P-256 verification: %.4f ms at the ceiling of %.0f/s on one core", verifyMilliseconds, ceiling.es256VerifyPerSecond)
                + (result.serverCPUMilliseconds.map { String(format: ", %.1f %% of the server's CPU per sign-in", verifyMilliseconds / $0 * 100) } ?? ""),
        ]
        return [result]
    }

    /// Adds a passkey to the account signed in with `cookie`.
    private func register(cookie: String) throws -> Passkey {
        let connection = try RawHTTPConnection(port: port)
        let session = try connection.send(RawHTTPConnection.request(method: "GET", path: "/realms/demo/v1/auth/session", port: port, headers: [("Cookie", cookie)]))
        guard session.status == 200, let csrf = (try? StrictJSON.parseObject(session.body))?["csrf_token"]?.stringValue else {
            throw BenchError("passkey: the signed-in session answered \(session.status)")
        }
        let headers = [("Cookie", cookie), ("X-CSRF-Token", csrf), ("Content-Type", "application/json")]
        let asked = try connection.send(RawHTTPConnection.request(method: "POST", path: Self.base + "/registration/options", port: port, headers: headers, body: "{}"))
        guard asked.status == 200, let options = try? JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self, from: Data(asked.body)) else {
            throw BenchError("passkey: registration options answered \(asked.status): \(String(decoding: asked.body.prefix(300), as: UTF8.self))")
        }
        let key = P256.Signing.PrivateKey()
        let id = SecureRandom.bytes(16)
        let point = Array(key.publicKey.x963Representation)
        // {1: 2, 3: -7, -1: 1, -2: x, -3: y} and {"fmt": "none", "attStmt": {}, "authData": …}, written out in CBOR.
        let coseKey: [UInt8] = [0xA5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20] + point[1..<33] + [0x22, 0x58, 0x20] + point[33..<65]
        let authData = Array(SHA256.hash(data: Array(options.rp.id.utf8))) + [0x45, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 16) + [0, 16] + id + coseKey
        let object: [UInt8] = [0xA3, 0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8) + [0x67] + Array("attStmt".utf8) + [0xA0]
            + [0x68] + Array("authData".utf8) + [0x59, UInt8(authData.count >> 8), UInt8(authData.count & 0xFF)] + authData
        let clientData = Self.clientData("webauthn.create", challenge: options.challenge, origin: baseURL)
        let response = RegistrationResponseJSON(
            id: Base64URL.encode(id), response: .init(clientDataJSON: Base64URL.encode(clientData), attestationObject: Base64URL.encode(object))
        )
        let body = String(decoding: try JSONEncoder().encode(response), as: UTF8.self)
        let registered = try connection.send(RawHTTPConnection.request(method: "POST", path: Self.base + "/registration", port: port, headers: headers, body: body))
        guard registered.status == 201 else {
            throw BenchError("passkey: registration answered \(registered.status): \(String(decoding: registered.body.prefix(300), as: UTF8.self))")
        }
        return Passkey(key: key, id: Base64URL.encode(id), userHandle: options.user.id, rpID: options.rp.id)
    }

    private func signIn(_ connection: RawHTTPConnection, with passkey: Passkey) throws {
        let asked = try connection.send(RawHTTPConnection.request(
            method: "POST", path: Self.base + "/authentication/options", port: port, headers: [("Content-Type", "application/json")], body: "{}"
        ))
        guard asked.status == 200, let cookie = asked.cookie, let csrf = asked.header("x-csrf-token"),
            let challenge = RawHTTPConnection.between(asked.body, #""challenge":""#, #"""#)
        else { throw BenchError("options: \(asked.status) \(String(decoding: asked.body.prefix(300), as: UTF8.self))") }
        let clientData = Self.clientData("webauthn.get", challenge: challenge, origin: baseURL)
        let authData = Array(SHA256.hash(data: Array(passkey.rpID.utf8))) + [0x05, 0, 0, 0, 0]
        let signature = try passkey.key.signature(for: authData + Array(SHA256.hash(data: clientData)))
        let body = #"{"id":"\#(passkey.id)","rawId":"\#(passkey.id)","type":"public-key","response":{"clientDataJSON":"\#(Base64URL.encode(clientData))","authenticatorData":"\#(Base64URL.encode(authData))","signature":"\#(Base64URL.encode(signature.derRepresentation))","userHandle":"\#(passkey.userHandle)"}}"#
        let signedIn = try connection.send(RawHTTPConnection.request(
            method: "POST", path: Self.base + "/authentication", port: port,
            headers: [("Content-Type", "application/json"), ("Cookie", cookie), ("X-CSRF-Token", csrf)], body: body
        ))
        guard signedIn.status == 200, signedIn.cookie?.hasPrefix("keyward-session=") == true else {
            throw BenchError("authentication: \(signedIn.status) \(String(decoding: signedIn.body.prefix(300), as: UTF8.self))")
        }
    }

    static func clientData(_ type: String, challenge: String, origin: String) -> [UInt8] {
        Array(#"{"type":"\#(type)","challenge":"\#(challenge)","origin":"\#(origin)","crossOrigin":false}"#.utf8)
    }
}
