// One list of a person's devices (issue 32): each registered installation they signed in on, with what the other
// parts hold for it (push approvals on its key, app sessions bound to it), and removing one of their own.
import Foundation

/// A person's device as the account page and `keyward devices list` show it.
public struct PersonDevice: Sendable {
    public let device: Device
    /// Push approvals are on for the person on this device's key.
    public let pushOn: Bool
    /// Live app sessions (refresh-token families) bound to the device's key.
    public let tokensHeld: Int
    /// What vouched for it, in words: "App Attest verified", "StrongBox key", "not attested".
    public let attestation: String
}

public struct PersonDevices: Sendable {
    let apps: DeviceAppService
    let deviceKeys: DeviceKeys

    /// The devices `userId` signed in on, newest seen first, removed ones included.
    public func list(realm: String, userId: String) async throws -> [PersonDevice] {
        var listed: [PersonDevice] = []
        for device in try await apps.devices(realm: realm, userId: userId) {
            let key = DeviceKeyLookup.key(device)
            // A removed device's too: what an interrupted removal left shows, and Remove again ends it.
            let holdings = try await deviceKeys.holdings(of: key, userId: userId)
            listed.append(PersonDevice(device: device, pushOn: holdings.pushOn, tokensHeld: holdings.tokensHeld, attestation: key.attestationWords))
        }
        return listed
    }
}
