// The registered devices behind keys, for the token endpoint and the gates (Core's `DeviceKeyDirectory`).
import Foundation

/// Answers which registered device holds a key. A key registered for several apps of the realm (the same
/// installation's key reused across apps) counts as unusable when any of them is, so removing it in one app cannot be
/// walked around through another; otherwise the first app's device names it.
struct DeviceKeyLookup: DeviceKeyDirectory {
    let store: any DeviceStore

    func device(realm: String, jkt: String) async throws -> RegisteredDeviceKey? {
        let devices = try await store.devices(realm: realm, keyThumbprint: jkt)
        guard let named = devices.first(where: { !$0.usable }) ?? devices.first else { return try await retired(realm: realm, jkt: jkt) }
        return Self.key(named, usable: devices.allSatisfy(\.usable))
    }

    /// A key a device rotated away from: the device's, never usable again.
    private func retired(realm: String, jkt: String) async throws -> RegisteredDeviceKey? {
        guard let (appId, deviceId) = try await store.retiredKey(realm: realm, keyThumbprint: jkt) else { return nil }
        let device = try await store.device(realm: realm, appId: appId, deviceId: deviceId)
        return RegisteredDeviceKey(
            realm: realm, appId: appId, deviceId: deviceId, keyThumbprint: jkt, platform: device?.platform.rawValue ?? "", attestation: "none",
            level: .none, usable: false, userId: device?.userId
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
