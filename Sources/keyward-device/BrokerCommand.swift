// keyward-device broker: an app getting a delegation for its own session key through the relay, on the command line.
import ArgumentParser
import Foundation
import KeywardJOSE
import KeywardKit

struct Broker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Get a delegation for a session key through the realm's relay: print the relay URL, read the URL the browser was sent back to from stdin, take the hand-off and exchange it; print the result.",
        discussion: """
            The session key is kept in the state directory as broker-session (created on first use). Open the printed URL \
            in a browser, sign in and allow the app, then paste the address the browser ends at (the return URL with \
            #code=…&nonce=…) on stdin. The delegation is verified against the realm's JWKS and must name the session key; \
            it is then exchanged at the token endpoint (jwt-bearer) for an access token bound to the key. Prints JSON: \
            sub, the delegation's expiry, the key's thumbprint, the token type, and the delegation itself.
            """
    )
    @Option(name: .customLong("state-dir"), help: "Directory holding the session key (mode 0700).")
    var stateDirectory = "keyward-device-state"

    @Option(help: "Session key algorithm when a new key is created: ES256 or EdDSA.")
    var alg = "EdDSA"

    @Option(help: "Realm issuer URL, e.g. http://127.0.0.1:8080/realms/demo.")
    var issuer: String

    @Option(name: .customLong("client-id"), help: "The app's public client id, registered with --broker.")
    var clientId: String

    @Option(name: .customLong("return"), help: "One of the client's registered redirect URIs, exactly: where the relay sends the browser back.")
    var returnURL: String

    func run() async throws {
        guard let algorithm = JWSAlgorithm(rawValue: alg), algorithm == .es256 || algorithm == .edDSA else {
            throw ValidationError("--alg '\(alg)' is not ES256 or EdDSA, the session keys the relay accepts")
        }
        let key = try FileKeyStore(directory: URL(fileURLWithPath: stateDirectory)).loadOrCreateKey(named: "broker-session", algorithm: algorithm)
        let client = BrokerClient(configuration: .init(issuer: issuer, clientId: clientId, returnURL: returnURL), sessionKey: DPoPSigner(key: key))
        let request = try client.startRelay()
        FileHandle.standardError.write(Data("Open this URL in a browser, sign in and allow the app, then paste the address the browser ends at:\n".utf8))
        // Written at once (print is buffered when stdout is a pipe): whoever reads the URL answers on stdin.
        FileHandle.standardOutput.write(Data((request.url.absoluteString + "\n").utf8))
        guard let line = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces), let callback = URL(string: line) else {
            throw ValidationError("no return URL on stdin")
        }
        let result = try await client.finish(request, callback: callback)
        let summary: JSONObject = [
            "sub": .string(result.subject), "delegation_expires_at": .number(result.expiresAt.timeIntervalSince1970.rounded(.down)),
            "jkt": .string(client.sessionKey.thumbprint), "token_type": .string(result.tokenType), "delegation": .string(result.delegation),
        ]
        print(String(decoding: StrictJSON.serialize(.object(summary)), as: UTF8.self))
    }
}
