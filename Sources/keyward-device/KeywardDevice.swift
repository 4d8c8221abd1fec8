// keyward-device's entry point: a phone on the command line, built on KeywardKit.
import ArgumentParser
import Foundation
import KeywardJOSE
import KeywardKit

@main
struct KeywardDevice: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyward-device",
        abstract: "A phone on the command line: a device key in a state directory, push-MFA enrollment and approvals, DPoP-bound tokens, device registration and signed requests, an app's sign-in (login, refresh, logout), and a software passkey (for tests and demos).",
        subcommands: [
            Enroll.self, Pending.self, Approve.self, Deny.self, RotateKey.self, PushProvider.self, Lockout.self, Status.self, Token.self, WhoAmI.self,
            Register.self, SignedCall.self, RotateDeviceKey.self, Login.self, Push.self, Refresh.self, Logout.self, Broker.self, Passkey.self,
        ]
    )
}

struct DeviceOptions: ParsableArguments {
    @Option(help: "Realm issuer URL, e.g. http://127.0.0.1:8080/realms/demo.")
    var issuer: String

    @Option(name: .customLong("client-id"), help: "OAuth client id.")
    var clientId = "push-device-client"

    @Option(name: .customLong("client-secret"), help: "OAuth client secret (env KEYWARD_CLIENT_SECRET).")
    var clientSecret: String?

    @Option(name: .customLong("state-dir"), help: "Directory holding the device key (mode 0700).")
    var stateDirectory = "keyward-device-state"

    @Option(help: "Device key algorithm when a new key is created (ES256, ES384, ES512, RS256, PS256, EdDSA; env DEVICE_SIGNING_ALG).")
    var alg: String?

    func client() throws -> TokenClient {
        let environment = ProcessInfo.processInfo.environment
        guard let secret = clientSecret ?? environment["KEYWARD_CLIENT_SECRET"] else {
            throw ValidationError("no client secret: pass --client-secret or set KEYWARD_CLIENT_SECRET")
        }
        let key = try deviceKey(stateDirectory: stateDirectory, alg: alg)
        return TokenClient(issuer: issuer, clientId: clientId, clientSecret: secret, signer: DPoPSigner(key: key))
    }
}

/// The device key in `stateDirectory` (made with `alg`, `DEVICE_SIGNING_ALG` or ES256 when there is none yet): the one
/// key every command of the device signs with.
func deviceKey(stateDirectory: String, alg: String?) throws -> any JWSSigner {
    let algorithmName = alg ?? ProcessInfo.processInfo.environment["DEVICE_SIGNING_ALG"] ?? "ES256"
    guard let algorithm = JWSAlgorithm(rawValue: algorithmName) else {
        throw ValidationError("--alg '\(algorithmName)' is not one of \(JWSAlgorithm.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    return try FileKeyStore(directory: URL(fileURLWithPath: stateDirectory)).loadOrCreateKey(named: "device", algorithm: algorithm)
}

struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Obtain a DPoP-bound access token and print it.")
    @OptionGroup var options: DeviceOptions

    func run() async throws {
        let client = try options.client()
        let token = try await client.clientCredentials()
        print(token.accessToken)
        FileHandle.standardError.write(Data("token_type=\(token.tokenType) expires_in=\(token.expiresIn) jkt=\(client.signer.thumbprint)\n".utf8))
    }
}

struct WhoAmI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "whoami", abstract: "Obtain a token, call the realm's /v1/whoami with DPoP and print the answer.")
    @OptionGroup var options: DeviceOptions

    func run() async throws {
        let client = try options.client()
        let token = try await client.clientCredentials()
        let (data, response) = try await client.send("GET", client.issuer + "/v1/whoami", accessToken: token.accessToken)
        print(String(decoding: data, as: UTF8.self))
        guard response.statusCode == 200 else { throw ExitCode(1) }
    }
}
