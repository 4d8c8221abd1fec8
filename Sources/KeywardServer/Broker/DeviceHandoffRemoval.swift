// What the broker ends with a registered device: the hand-offs waiting for its key.
import Foundation

/// Deletes the hand-offs left for a removed device's key, so none can be taken after the removal returned.
struct DeviceHandoffRemoval: DeviceRemovalStep {
    let store: any HandoffStore

    func removed(_ device: RegisteredDeviceKey, at: Date) async throws {
        _ = try await store.deleteAll(realm: device.realm, jkt: device.keyThumbprint)
    }
}
