// keyward-device push enable: push approvals on this installation's registered device key, without a QR code.
import ArgumentParser
import Foundation
import KeywardKit

struct Push: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Push approvals on the registered device's own key (one device, one key).",
        discussion: """
            The one-key story on the command line: register (keyward-device register --app-id A), sign in with that key \
            (login --app-id A), turn push approvals on (push enable), then answer logins (pending, approve, deny) — all \
            with the registered key and the person's own tokens, no client secret and no QR code.
            """,
        subcommands: [PushEnable.self]
    )
}

struct PushEnable: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enable",
        abstract: "Turn push approvals on for the registered device, on its key, for the person signed in on it.",
        discussion: """
            Needs `login --app-id` within the last 10 minutes, with the second factor (--acr-values urn:keyward:acr:mfa) \
            when the person approves on another device already. Saves device.json, which pending, approve and deny read.
            """
    )

    @Option(name: .customLong("state-dir"), help: "Directory holding the registration, the sign-in and device.json (mode 0700).")
    var stateDirectory = "keyward-device-state"

    @Option(name: .customLong("push-provider-type"), help: "log, none, fcm or apns.")
    var pushProviderType = "log"

    @Option(name: .customLong("push-provider-id"), help: "FCM/APNs device token (default: a generated id for log).")
    var pushProviderId: String?

    @Option(name: .customLong("device-label"), help: "The name the account page and the waiting page show (default: the server's).")
    var deviceLabel: String?

    func run() async throws {
        let directory = URL(fileURLWithPath: stateDirectory)
        guard let installation = try signedInInstallation(in: stateDirectory) else {
            throw DeviceCommandError("no sign-in on a registered device key in \(stateDirectory): run keyward-device register --app-id A, then login --app-id A")
        }
        if let existing = try DeviceState.load(from: directory), existing.registeredAppId == nil {
            throw DeviceCommandError("\(stateDirectory) holds a phone enrolled by QR code already; use another --state-dir")
        }
        let deviceId = try await installation.registration().state.deviceId
        let providerId = pushProviderId ?? (pushProviderType == "none" ? nil : "keyward-device-\(deviceId)")
        let push = try await installation.enablePush(AppInstallation.PushOptions(providerType: pushProviderType, providerId: providerId, deviceLabel: deviceLabel))
        print("push approvals on for device \(push.state.deviceId) of app \(installation.configuration.appId) (credential \(push.state.credentialId), user \(push.state.userId))")
    }
}
