// One list of a person's devices (issue 32): each registered installation they signed in on, with what the other
// parts hold for it — push approvals on its key, app sessions bound to its key.
import Foundation

/// A person's device as the CLI lists it (`keyward devices list`).
public struct PersonDevice: Sendable {
    public let device: Device
    /// Push approvals are on for the person on this device's key.
    public let pushOn: Bool
    /// Live app sessions (refresh-token families) bound to the device's key.
    public let tokensHeld: Int
    /// What vouched for it, in words: "App Attest verified", "StrongBox key", "not attested".
    public let attestation: String
}

extension KeywardRuntime {
    /// The devices `userId` signed in on, newest seen first, removed ones included.
    public func personDevices(realm: String, userId: String) async throws -> [PersonDevice] {
        let devices = try await self.devices.apps.devices(realm: realm, userId: userId)
        guard !devices.isEmpty else { return [] }
        let credentials = try await pushMFA.service.credentials.credentials(realm: realm, userId: userId)
        let families = try await openID.families.liveFamilies(realm: realm, userId: userId, now: clock.now())
        return devices.map { device in
            PersonDevice(
                device: device,
                pushOn: credentials.contains { $0.registeredAppId == device.appId && $0.registeredDeviceId == device.deviceId },
                tokensHeld: device.usable ? families.filter { $0.jkt == device.keyThumbprint }.count : 0,
                attestation: DeviceKeyLookup.key(device).attestationWords
            )
        }
    }
}
