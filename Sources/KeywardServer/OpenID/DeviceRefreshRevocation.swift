// What OpenID ends with a registered device (the app sessions whose refresh tokens are bound to its key), and what
// it carries to the device's new key.
import Foundation
import KeywardJOSE

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

/// Binds the app sessions of a registered device's old key to its new key when the device rotates it: the next
/// refresh needs a proof by the new key (the rotation was signed by the old key with a proof by the new one), and
/// the old key refreshes nothing.
struct DeviceRefreshRebinding: DeviceKeyRotationStep {
    let families: any RefreshFamilyStore

    func rotated(_ device: RegisteredDeviceKey, previousThumbprint: String, publicKey: JWK, at: Date) async throws {
        _ = try await families.rebind(realm: device.realm, from: previousThumbprint, to: device.keyThumbprint)
    }
}

/// How many live app sessions a person holds on a registered device's key (the one list of their devices).
struct DeviceAppSessionHoldings: DeviceHoldingsReporter {
    let families: any RefreshFamilyStore
    let clock: any KeywardClock

    func holdings(of device: RegisteredDeviceKey, userId: String) async throws -> DeviceHoldings {
        let live = try await families.liveFamilies(realm: device.realm, userId: userId, now: clock.now())
        return DeviceHoldings(tokensHeld: live.filter { $0.jkt == device.keyThumbprint }.count)
    }
}
