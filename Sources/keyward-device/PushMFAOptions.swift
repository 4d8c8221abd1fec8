// The options every keyward-device push-MFA command shares: state directory, OAuth client, device key type.
import ArgumentParser
import Foundation
import KeywardJOSE
import KeywardKit

/// Options every push-MFA command shares: where the device lives and how it gets tokens.
struct PushDeviceOptions: ParsableArguments {
    @Option(name: .customLong("state-dir"), help: "Directory holding the device key and device.json (mode 0700).")
    var stateDirectory = "keyward-device-state"

    @Option(name: .customLong("client-id"), help: "OAuth client the device gets its tokens from.")
    var clientId = "push-device-client"

    @Option(name: .customLong("client-secret"), help: "That client's secret (env KEYWARD_CLIENT_SECRET).")
    var clientSecret: String?

    var directory: URL { URL(fileURLWithPath: stateDirectory) }
    var keyStore: FileKeyStore { FileKeyStore(directory: directory) }
    static let keyName = "push-mfa"
    /// The new key while a rotation is in flight; left behind only if `rotate-key` was interrupted.
    static let nextKeyName = "push-mfa-next"

    func secret() throws -> String {
        guard let secret = clientSecret ?? ProcessInfo.processInfo.environment["KEYWARD_CLIENT_SECRET"], !secret.isEmpty else {
            throw DeviceCommandError("no client secret: pass --client-secret or set KEYWARD_CLIENT_SECRET")
        }
        return secret
    }

    /// The enrolled device in the state directory: one enrolled by QR code, with its `push-mfa` key and the client's
    /// tokens, or a registered device that turned push approvals on, with its registered key and the person's sign-in.
    func client() async throws -> PushMFAClient {
        guard let state = try DeviceState.load(from: directory) else { throw KeywardKitError.notEnrolled(directory.path) }
        if let appId = state.registeredAppId {
            guard let installation = try signedInInstallation(in: stateDirectory, appId: appId) else {
                throw DeviceCommandError("push approvals here answer with the person's sign-in on the device key: run keyward-device login --app-id \(appId) first")
            }
            guard let client = try await installation.pushApprovals() else {
                throw KeywardKitError.notEnrolled(directory.path)
            }
            return client
        }
        guard let key = try keyStore.key(named: Self.keyName) else { throw KeywardKitError.notEnrolled(directory.path) }
        if try keyStore.key(named: Self.nextKeyName) != nil {
            FileHandle.standardError.write(Data((
                "warning: a key rotation was interrupted; if the server refuses this device's proofs (Invalid DPoP proof signature, "
                    + "Access token DPoP binding mismatch), it switched to the new key: move \(stateDirectory)/\(Self.nextKeyName).key "
                    + "over \(Self.keyName).key. Otherwise delete \(Self.nextKeyName).key.\n"
            ).utf8))
        }
        return PushMFAClient(state: state, key: key, clientId: clientId, clientSecret: try secret())
    }
}

/// `--key-type`, `--curve`, `--alg`, with the environment variables of the original's demo clients.
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("key-type"), help: "RSA (default) or EC (env DEVICE_KEY_TYPE).")
    var keyType: String?

    @Option(help: "EC curve: P-256, P-384 or P-521 (env DEVICE_EC_CURVE).")
    var curve: String?

    @Option(help: "Signing algorithm: RS256/RS384/RS512 or ES256/ES384/ES512 (env DEVICE_SIGNING_ALG).")
    var alg: String?

    func spec() throws -> DeviceKeySpec {
        let environment = ProcessInfo.processInfo.environment
        return try DeviceKeySpec(
            keyType: keyType ?? environment["DEVICE_KEY_TYPE"], curve: curve ?? environment["DEVICE_EC_CURVE"], alg: alg ?? environment["DEVICE_SIGNING_ALG"]
        )
    }
}

/// A refusal worth one line (`Error: …`) without the usage text ArgumentParser adds to validation errors.
struct DeviceCommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
