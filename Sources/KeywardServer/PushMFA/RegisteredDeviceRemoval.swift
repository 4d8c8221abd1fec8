// What push MFA ends with a registered device: the push credentials made on its key.
import Foundation

/// Deletes the push credentials made on a removed device's key (they approve nothing from its removal on: see
/// `approvingDevices`); a login waiting for them can then only be answered by the person's other devices.
struct RegisteredDevicePushRemoval: DeviceRemovalStep {
    let credentials: any PushCredentialStore
    let audit: AuditLog

    func removed(_ device: RegisteredDeviceKey, at: Date) async throws {
        for credential in try await credentials.deleteRegisteredDeviceCredentials(realm: device.realm, appId: device.appId, deviceId: device.deviceId) {
            await audit.record(.credentialRemoved, realm: device.realm, userId: credential.userId, details: [
                "credential": credential.id, "reason": "registered device removed", "device_id": device.deviceId,
            ])
        }
    }
}
