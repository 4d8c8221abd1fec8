// The registered devices behind keys, for the token endpoint and the gates (Core's `DeviceKeyDirectory`).
import Foundation

/// Answers which registered device holds a key. A key registered for several apps of the realm (the same
/// installation's key reused across apps) counts as unusable when any of them is, so removing it in one app cannot be
/// walked around through another; otherwise the first app's device names it.
struct DeviceKeyLookup: DeviceKeyDirectory {
    let store: any DeviceStore

    func device(realm: String, jkt: String) async throws -> RegisteredDeviceKey? {
        let devices = try await store.devices(realm: realm, keyThumbprint: jkt)
        guard let named = devices.first(where: { !$0.usable }) ?? devices.first else { return nil }
        return Self.key(named, usable: devices.allSatisfy(\.usable))
    }

    /// `device` as the other parts see it.
    static func key(_ device: Device, usable: Bool? = nil) -> RegisteredDeviceKey {
        RegisteredDeviceKey(
            realm: device.realm, appId: device.appId, deviceId: device.deviceId, keyThumbprint: device.keyThumbprint, platform: device.platform.rawValue,
            attestation: device.attestationKind, level: device.attestationLevel, keyStorage: device.keyStorage, usable: usable ?? device.usable
        )
    }

    func signedIn(_ device: RegisteredDeviceKey, userId: String, at: Date) async throws {
        try await store.recordSignIn(realm: device.realm, appId: device.appId, deviceId: device.deviceId, userId: userId, at: at)
    }
}
