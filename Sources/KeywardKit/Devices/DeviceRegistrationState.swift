// What an installation remembers of its registration with one app, saved at every phase change.
import Foundation

/// What an installation remembers about its registration with one app: saved by a ``DeviceRegistrationStore`` at
/// every move of its ``RegistrationPhase``.
public struct DeviceRegistrationState: Codable, Sendable, Equatable {
    /// The app id the server knows the app by.
    public var appId: String
    /// The issuer URL of the realm the app is registered in.
    public var issuer: String
    /// Where the registration stands.
    public var phase: RegistrationPhase
    /// The device id: chosen by the installation before its first attempt and sent with every attempt, so a
    /// registration the server completed but whose answer was lost is recognised when it is sent again.
    public var deviceId: String
    /// The name of the device key in the ``KeyStore`` (the key handle).
    public var keyName: String
    /// The name of the next key while a key rotation is under way (phase `registering`); nil otherwise.
    public var pendingKeyName: String?
    /// The server's verdict on the device: `registered`, `pending` (waiting for an operator) or `rejected`.
    public var status: String?
    /// When the server registered the device.
    public var registeredAt: Date?
    /// When the server last switched the device to a new key; nil until the first rotation.
    public var keyRotatedAt: Date?
    /// How far the server's clock is ahead of this device's, learned from a `CLOCK_SKEW` answer; signed requests
    /// add it to their timestamps.
    public var clockOffsetMs: Int64
    /// The App Attest key whose attestation the server took with this registration (the `keyId` it carried): signed
    /// requests are App Attest assertions by it. Nil for a device registered without one, and in state files
    /// written before assertions were signed. While a registration is under way, the key id of the attestation its
    /// last attempt sent.
    public var appAttestKeyId: String?

    /// A state in `phase` `unregistered`, before anything is sent.
    public init(appId: String, issuer: String, deviceId: String, keyName: String) {
        self.appId = appId
        self.issuer = issuer
        self.phase = .unregistered
        self.deviceId = deviceId
        self.keyName = keyName
        self.clockOffsetMs = 0
    }

    enum CodingKeys: String, CodingKey {
        case appId = "app_id"
        case issuer, phase
        case deviceId = "device_id"
        case keyName = "key_name"
        case pendingKeyName = "pending_key_name"
        case status
        case registeredAt = "registered_at"
        case keyRotatedAt = "key_rotated_at"
        case clockOffsetMs = "clock_offset_ms"
        case appAttestKeyId = "app_attest_key_id"
    }

    /// Moves to `next`, refusing a move the state machine does not have; the caller saves the result.
    public mutating func move(to next: RegistrationPhase) throws(KeywardKitError) {
        phase = try phase.moving(to: next)
    }
}

/// The one rule for app ids, the server's: 1-255 letters, digits, `.`, `-` and `_`.
enum DeviceAppId {
    static func check(_ appId: String) throws(KeywardKitError) {
        guard (1...255).contains(appId.utf8.count), appId.utf8.allSatisfy(isNameByte) else { throw .invalidAppId(appId) }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
