// The registered devices behind keys, for the token endpoint and the gates (Core's `DeviceKeyDirectory`).
import Foundation

/// Answers which registered device holds a key. A key registered for several apps of the realm (the same
/// installation's key reused across apps) counts as unusable when any of them is, so removing it in one app cannot be
/// walked around through another; otherwise the first app's device names it.
struct DeviceKeyLookup: DeviceKeyDirectory {
    let store: any DeviceStore

    func device(realm: String, jkt: String) async throws -> RegisteredDeviceKey? {
        let holders = try await store.keyHolders(realm: realm, keyThumbprint: jkt)
        if let named = holders.devices.first(where: { !$0.usable }) ?? holders.devices.first {
            return Self.key(named, usable: holders.devices.allSatisfy(\.usable))
        }
        // A key a device rotated away from: the device's, never usable again.
        guard let retired = holders.retiredFrom else { return nil }
        return RegisteredDeviceKey(
            realm: realm, appId: retired.appId, deviceId: retired.deviceId, keyThumbprint: jkt, platform: retired.platform ?? "", attestation: "none",
            level: .none, usable: false, userId: retired.userId
        )
    }

    /// `device` as the other parts see it.
    static func key(_ device: Device, usable: Bool? = nil) -> RegisteredDeviceKey {
        let facts = device.attestationFacts
        return RegisteredDeviceKey(
            realm: device.realm, appId: device.appId, deviceId: device.deviceId, keyThumbprint: device.keyThumbprint, platform: device.platform.rawValue,
            attestation: facts.kind, level: facts.level, keyStorage: facts.keyStorage, usable: usable ?? device.usable, userId: device.userId
        )
    }

    func signedIn(_ device: RegisteredDeviceKey, userId: String, at: Date) async throws {
        try await store.recordSignIn(realm: device.realm, appId: device.appId, deviceId: device.deviceId, userId: userId, at: at)
    }
}
