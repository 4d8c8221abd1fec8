// What push MFA ends with a registered device (the push credentials made on its key), and what it carries to the
// device's new key.
import Foundation
import KeywardJOSE

/// Deletes the push credentials made on a removed device's key (they approve nothing from its removal on: see
/// `approvingDevices`); a login waiting for them can then only be answered by the person's other devices.
struct RegisteredDevicePushRemoval: DeviceRemovalStep {
    let credentials: any PushCredentialStore
    let audit: AuditLog

    func removed(_ device: RegisteredDeviceKey, at: Date) async throws {
        var removed = try await credentials.deleteRegisteredDeviceCredentials(realm: device.realm, appId: device.appId, deviceId: device.deviceId)
        // The device's person may also have enrolled the same key by QR code: it goes too.
        if let userId = device.userId {
            for credential in try await credentials.credentials(realm: device.realm, userId: userId)
            where credential.registeredDeviceId == nil && (try? JWK(jsonString: credential.publicKeyJWK).thumbprint()) == device.keyThumbprint {
                try await credentials.deleteCredential(realm: device.realm, userId: userId, id: credential.id)
                removed.append(credential)
            }
        }
        for credential in removed {
            await audit.record(.credentialRemoved, realm: device.realm, userId: credential.userId, details: [
                "credential": credential.id, "reason": "registered device removed", "device_id": device.deviceId,
            ])
        }
    }
}

/// Moves the push credentials made on a registered device to its new key when the device rotates it: approvals
/// then need the new key, and the old one approves nothing.
struct RegisteredDevicePushRekey: DeviceKeyRotationStep {
    let credentials: any PushCredentialStore

    func rotated(_ device: RegisteredDeviceKey, previousThumbprint: String, publicKey: JWK, at: Date) async throws {
        var jwk = publicKey.jsonObject
        jwk["alg"] = .string(JWSAlgorithm.es256.rawValue)
        try await credentials.rekeyRegisteredDeviceCredentials(
            realm: device.realm, appId: device.appId, deviceId: device.deviceId, publicKeyJWK: String(decoding: StrictJSON.serialize(jwk), as: UTF8.self)
        )
    }
}

/// Whether push approvals are on for the person on a registered device (the one list of their devices).
struct RegisteredDevicePushHoldings: DeviceHoldingsReporter {
    let credentials: any PushCredentialStore

    func holdings(of device: RegisteredDeviceKey, userId: String) async throws -> DeviceHoldings {
        let credentials = try await credentials.credentials(realm: device.realm, userId: userId)
        return DeviceHoldings(pushOn: credentials.contains { $0.registeredAppId == device.appId && $0.registeredDeviceId == device.deviceId })
    }
}

/// A disabled person's push credentials made on registered devices go, wherever those devices now are (another
/// person may have signed in on one since): enabling the account again brings no approver back. Phones enrolled by
/// QR code stay, as they always have.
struct RegisteredDevicePushDisable: UserDisableStep {
    let credentials: any PushCredentialStore
    let audit: AuditLog

    func disabled(realm: String, userId: String) async throws {
        for credential in try await credentials.credentials(realm: realm, userId: userId) where credential.registeredDeviceId != nil {
            try await credentials.deleteCredential(realm: realm, userId: userId, id: credential.id)
            await audit.record(.credentialRemoved, realm: realm, userId: userId, details: ["credential": credential.id, "reason": "account disabled"])
        }
    }
}
