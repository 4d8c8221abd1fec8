// What Devices ends when a person's account is disabled: every device they signed in on.
import Foundation

/// Removes the devices a disabled person signed in on (`keyward users disable`, the panic button), each with
/// everything its key holds (`DeviceAppService.removeDevice`). Enabling the account again does not bring them back:
/// their installations register new keys.
struct PersonDevicesRemoval: UserDisableStep {
    let apps: DeviceAppService

    func disabled(realm: String, userId: String) async throws {
        for device in try await apps.devices(realm: realm, userId: userId) where device.removedAt == nil {
            try await apps.removeDevice(realm: realm, appId: device.appId, deviceId: device.deviceId, userId: userId)
        }
    }
}
