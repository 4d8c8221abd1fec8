// keyward-device rotate-key, push-provider and lockout: what a phone does to its own enrollment.
import ArgumentParser
import Foundation
import KeywardKit

struct RotateKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rotate-key", abstract: "Replace the device key (proving possession of the new one).")
    @OptionGroup var device: PushDeviceOptions
    @OptionGroup var key: KeyOptions

    func run() async throws {
        if let appId = try DeviceState.load(from: device.directory)?.registeredAppId {
            throw DeviceCommandError("this device approves with its registered device key: rotate that with keyward-device rotate-device-key --app-id \(appId)")
        }
        let client = try await device.client()
        // The new key is on disk as push-mfa-next.key before the server hears of it: if this process dies after the
        // server's 200, the only key that still works survives there (PushDeviceOptions.client() points at it).
        let rotated = try await client.rotateKey(
            to: try key.spec(), in: device.keyStore, keyName: PushDeviceOptions.keyName, nextKeyName: PushDeviceOptions.nextKeyName
        )
        try rotated.state.save(to: device.directory)
        print("rotated to a new \(rotated.key.algorithm.rawValue) key")
    }
}

struct PushProvider: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "push-provider", abstract: "Tell the server where to push (FCM/APNs token).")
    @OptionGroup var device: PushDeviceOptions
    @Option(help: "Push provider id (FCM registration token, APNs device token).") var id: String
    @Option(help: "log, none, fcm or apns (default: keep the current type).") var type: String?

    func run() async throws {
        let client = try await device.client()
        let status = try await client.updatePushProvider(id: id, type: type)
        var state = client.state
        state.pushProviderId = id
        if let type, !type.isEmpty { state.pushProviderType = type }
        try state.save(to: device.directory)
        print(status)
    }
}

struct Lockout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Panic button: disable the account and end every pending login.")
    @OptionGroup var device: PushDeviceOptions

    func run() async throws {
        try await device.client().lockout()
        print("locked_out")
    }
}
