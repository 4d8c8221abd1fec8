// keyward-device enroll: enrolling this command-line phone from an enrollment link.
import ArgumentParser
import Foundation
import KeywardKit

struct Enroll: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Enroll this device from an enrollment link (QR code content), a request_uri link, or a raw token.",
        discussion: "The realm's enrollment token is verified against its JWKS (issuer, audience, expiry) before anything is sent."
    )
    @OptionGroup var device: PushDeviceOptions
    @OptionGroup var key: KeyOptions
    @Argument(help: "my-secure://enroll?token=…, …?request_uri=…, an https URL, or the JWT itself.") var link: String
    @Option(help: "Realm issuer URL, e.g. https://id.example.com/realms/demo (default: the token's issuer if https or loopback).") var issuer: String?
    @Option(name: .customLong("device-type"), help: "Device type reported to the server.") var deviceType = "linux"
    @Option(name: .customLong("device-label"), help: "Label shown on the account page.") var deviceLabel = "keyward-device"
    @Option(name: .customLong("push-provider-type"), help: "log, none, fcm or apns.") var pushProviderType = "log"
    @Option(name: .customLong("push-provider-id"), help: "FCM/APNs device token (default: a generated id for log).") var pushProviderId: String?
    @Flag(name: .customLong("no-dpop"), help: "Enroll without Authorization/DPoP headers, like the original's older clients.") var noDPoP = false

    func run() async throws {
        if try DeviceState.load(from: device.directory) != nil {
            throw DeviceCommandError("\(device.stateDirectory) already holds an enrolled device; use another --state-dir")
        }
        var options = PushMFAClient.EnrollmentOptions()
        options.deviceType = deviceType
        options.deviceLabel = deviceLabel
        options.pushProviderType = pushProviderType
        options.pushProviderId = pushProviderId
        options.useDPoP = !noDPoP
        let parsedLink = try EnrollmentLink.parse(link)
        let secret = try device.secret()
        let spec = try key.spec()
        let deviceKey = try device.keyStore.createKey(named: PushDeviceOptions.keyName, algorithm: spec.algorithm)
        let client: PushMFAClient
        do {
            client = try await PushMFAClient.enroll(
                link: parsedLink, issuer: issuer, clientId: device.clientId, clientSecret: secret, key: deviceKey, options: options
            )
        } catch {
            // Without device.json the key belongs to nothing; the next enroll would replace it anyway.
            try? device.keyStore.deleteKey(named: PushDeviceOptions.keyName)
            throw error
        }
        try client.state.save(to: device.directory)
        print("enrolled \(client.state.deviceLabel) for \(client.state.username) in realm \(client.state.realm) (\(client.key.algorithm.rawValue), deviceId \(client.state.deviceId))")
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the enrolled device's state.")
    @OptionGroup var device: PushDeviceOptions

    func run() async throws {
        guard let state = try DeviceState.load(from: device.directory) else { throw KeywardKitError.notEnrolled(device.directory.path) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        print(String(decoding: try encoder.encode(state), as: UTF8.self))
    }
}
