// What Devices ends when a person's account is disabled: every device they signed in on.
import Foundation

/// Removes the devices a disabled person signed in on (`keyward users disable`, the panic button), each with
/// everything its key holds (`DeviceAppService.removeDevice`). Enabling the account again does not bring them back:
/// their installations register new keys.
struct PersonDevicesRemoval: UserDisableStep {
    let apps: DeviceAppService

    /// Every device is tried, removed or not (a removal run again ends what an earlier failure left); the first
    /// failure is thrown after all were.
    func disabled(realm: String, userId: String) async throws {
        try await runEach(try await apps.devices(realm: realm, userId: userId)) { device in
            try await apps.removeDevice(realm: realm, appId: device.appId, deviceId: device.deviceId, userId: userId)
        }
    }
}
