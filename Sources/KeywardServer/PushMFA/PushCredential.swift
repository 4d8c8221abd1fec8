// A phone enrolled for push MFA: its ids, public key and push provider.
import Foundation

/// A phone enrolled for push MFA. `credentialId` and `deviceId` are chosen by the device; `id` is Keyward's
/// own and never leaves the server (the Keycloak extension's credential UUID plays the same role).
public struct PushCredential: Sendable, Equatable {
    public var id: String
    public var realm: String
    public var userId: String
    public var credentialId: String
    public var deviceId: String
    public var deviceType: String
    public var deviceLabel: String
    /// The device's public JWK as a JSON object string; its `alg`, when present, pins every later signature.
    public var publicKeyJWK: String
    public var pushProviderId: String
    public var pushProviderType: String
    /// Cleared when the push service reports the device token gone (APNs 410, FCM UNREGISTERED).
    public var pushTokenValid: Bool
    public var createdAt: Date
    public var lastUsedAt: Date?
    /// Created on a registered device's own key (`POST …/v1/device/push-mfa`): that device, whose removal and
    /// attestation then apply to the approvals. Nil for a phone enrolled by QR code.
    public var registeredAppId: String?
    public var registeredDeviceId: String?

    public init(
        id: String, realm: String, userId: String, credentialId: String, deviceId: String, deviceType: String,
        deviceLabel: String, publicKeyJWK: String, pushProviderId: String, pushProviderType: String,
        pushTokenValid: Bool = true, createdAt: Date, lastUsedAt: Date? = nil, registeredAppId: String? = nil, registeredDeviceId: String? = nil
    ) {
        self.registeredAppId = registeredAppId
        self.registeredDeviceId = registeredDeviceId
        self.id = id
        self.realm = realm
        self.userId = userId
        self.credentialId = credentialId
        self.deviceId = deviceId
        self.deviceType = deviceType
        self.deviceLabel = deviceLabel
        self.publicKeyJWK = publicKeyJWK
        self.pushProviderId = pushProviderId
        self.pushProviderType = pushProviderType
        self.pushTokenValid = pushTokenValid
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }

    /// A stored blank type reads back as `log`, as in the original.
    public var effectivePushProviderType: String {
        pushProviderType.trimmingCharacters(in: .whitespaces).isEmpty ? "log" : pushProviderType
    }
}
