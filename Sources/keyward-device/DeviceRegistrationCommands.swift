// keyward-device register, signed-call and rotate-device-key: this command-line phone as an app installation with a
// registered device key (the Devices API), built on KeywardKit's DeviceRegistrar.
import ArgumentParser
import Foundation
import KeywardKit

extension DevicePlatform: ExpressibleByArgument {}

/// Where the installation lives and which app of which realm it registers with.
struct InstallationOptions: ParsableArguments {
    @Option(help: "Realm issuer URL, e.g. http://127.0.0.1:8080/realms/demo.")
    var issuer: String

    @Option(name: .customLong("app-id"), help: "The app id the server knows the app by (keyward apps add).")
    var appId: String

    @Option(name: .customLong("state-dir"), help: "Directory holding the device key and registration-<app id>.json (mode 0700).")
    var stateDirectory = "keyward-device-state"

    @Option(help: "The app's platform as added on the server: ios or android.")
    var platform: DevicePlatform = .ios

    /// No attestation: there is no platform attestation on Linux, so the server's app must accept a missing one
    /// (`keyward apps add … --missing-attestation accept`, or `pending` for an operator to decide).
    func registrar() -> DeviceRegistrar {
        let directory = URL(fileURLWithPath: stateDirectory)
        return DeviceRegistrar(
            issuer: issuer, platform: platform, keyStore: FileKeyStore(directory: directory),
            stateStore: FileDeviceRegistrationStore(directory: directory), attester: NoAttestation()
        )
    }
}

struct Register: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Register this installation's device key (P-256) with an app, or show the registration it has.",
        discussion: """
            Fetches a challenge, makes the key, proves possession by signing the challenge, and registers it; no \
            attestation is sent, so the app must accept a missing one (keyward apps add … --missing-attestation \
            accept or pending). Run again, it prints the saved registration without contacting the server. A \
            registration that was interrupted is sent again with a fresh challenge; failed attempts are retried up \
            to five times when the server did not answer or answered 5xx.
            """
    )
    @OptionGroup var installation: InstallationOptions
    @Option(name: .customLong("device-id"), help: "Device id of a first registration (default: a new UUID).")
    var deviceId: String?

    func run() async throws {
        let result = try await installation.registrar().registerDevice(appId: installation.appId, deviceId: deviceId)
        let state = result.state
        let status = state.status ?? "unknown"
        if result.alreadyRegistered {
            print("already registered: device \(state.deviceId) for app \(state.appId) (status \(status))")
        } else {
            print("registered device \(state.deviceId) for app \(state.appId) (status \(status))")
        }
        if let attestation = result.attestation, attestation != .none {
            FileHandle.standardError.write(Data("attestation: \(attestation)\n".utf8))
        }
    }
}

struct SignedCall: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signed-call",
        abstract: "Send a request signed by the registered device key and print the answer's status and body.",
        discussion: """
            The request carries X-App-ID, X-Device-ID, X-Keyward-Timestamp, X-Keyward-Nonce, X-Keyward-Sig-Version \
            and X-Keyward-Signature (README: Signed device requests). On CLOCK_SKEW the server's time is learned, \
            saved, and the request is sent once more. Exits 1 when the answer is not 2xx.
            """
    )
    @OptionGroup var installation: InstallationOptions
    @Option(help: "HTTP method (default GET, or POST with --data).") var method: String?
    @Option(help: "Request body, sent as application/json.") var data: String?
    @Argument(help: "Path under the realm, or an absolute URL.") var path = "/v1/device/status"

    func run() async throws {
        let (body, response) = try await installation.registrar().send(
            appId: installation.appId, method: (method ?? (data == nil ? "GET" : "POST")).uppercased(), path: path, body: data.map { Data($0.utf8) }
        )
        print("HTTP \(response.statusCode)")
        print(String(decoding: body, as: UTF8.self))
        guard (200..<300).contains(response.statusCode) else { throw ExitCode(1) }
    }
}

struct RotateDeviceKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-device-key",
        abstract: "Replace the registered device key; the device id stays.",
        discussion: """
            The new key is stored under <key name>-next before the server hears of it, the request is signed by the \
            current key and carries the new key's signature over a fresh challenge, and the new key replaces the old \
            one only after the server's 200. If the outcome is unknown, the next command asks the server which key \
            it holds and keeps that one. Push approvals turned on with `push enable` move to the new key on the server, \
            and a sign-in made with `login --app-id` is refreshed with it at once. (rotate-key rotates the key of a \
            phone enrolled by QR code instead.)
            """
    )
    @OptionGroup var installation: InstallationOptions

    func run() async throws {
        let state: DeviceRegistrationState
        if let signedIn = try signedInInstallation(in: installation.stateDirectory, appId: installation.appId) {
            // The person is signed in on this key: the sign-in is refreshed with the new key, or it would end.
            state = try await signedIn.rotateKey()
        } else {
            state = try await installation.registrar().rotateKey(appId: installation.appId)
        }
        print("rotated the key of device \(state.deviceId) for app \(state.appId)")
    }
}
