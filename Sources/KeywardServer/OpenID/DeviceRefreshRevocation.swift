// What OpenID ends with a registered device: the app sessions whose refresh tokens are bound to its key.
import Foundation

/// Revokes the refresh-token families bound to a removed device's key (the token endpoint refuses the key already;
/// revoked, the sessions also leave the account page's list).
struct DeviceRefreshRevocation: DeviceRemovalStep {
    let families: any RefreshFamilyStore
    let audit: AuditLog

    func removed(_ device: RegisteredDeviceKey, at: Date) async throws {
        let revoked = try await families.revokeAll(realm: device.realm, jkt: device.keyThumbprint, now: at)
        if revoked > 0 {
            await audit.record(.sessionEnded, realm: device.realm, userId: nil, details: [
                "reason": "registered device removed", "device_id": device.deviceId, "sessions": String(revoked),
            ])
        }
    }
}
