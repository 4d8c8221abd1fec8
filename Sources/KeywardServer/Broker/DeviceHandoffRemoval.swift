// What the broker ends with a registered device: the hand-offs waiting for its key.
import Foundation
import KeywardJOSE

/// Deletes the hand-offs left for a removed device's key, so none can be taken after the removal returned.
struct DeviceHandoffRemoval: DeviceRemovalStep {
    let store: any HandoffStore

    func removed(_ device: RegisteredDeviceKey, at: Date) async throws {
        _ = try await store.deleteAll(realm: device.realm, jkt: device.keyThumbprint)
    }
}

/// Deletes the hand-offs left for a registered device's old key when the device rotates it: the old key takes nothing.
struct DeviceHandoffRekey: DeviceKeyRotationStep {
    let store: any HandoffStore

    func rotated(_ device: RegisteredDeviceKey, previousThumbprint: String, publicKey: JWK, at: Date) async throws {
        _ = try await store.deleteAll(realm: device.realm, jkt: previousThumbprint)
    }
}
