// What an enrolled push-MFA device remembers, saved privately as device.json beside its key.
import Foundation
import KeywardWire

/// What an enrolled device remembers, kept as `device.json` (mode 0600) beside its key.
public struct DeviceState: Codable, Sendable, Equatable {
    /// The issuer URL of the realm the device enrolled in.
    public var issuer: String
    /// The realm's name, the last path component of `issuer`.
    public var realm: String
    /// The server's id of the user the device belongs to (the tokens' `sub`).
    public var userId: String
    /// The user's name, for display.
    public var username: String
    /// The id the device chose for its credential; confirm tokens name it as `credId`.
    public var credentialId: String
    /// The id the device chose for itself; every DPoP proof carries it beside `userId`.
    public var deviceId: String
    /// Free text reported at enrollment, such as `ios`.
    public var deviceType: String
    /// The label the user's account page shows for this device.
    public var deviceLabel: String
    /// Where pushes go: the FCM registration token or APNs device token (empty with `none`).
    public var pushProviderId: String
    /// The push sender the server uses for this device: `fcm`, `apns`, `log` or `none`.
    public var pushProviderType: String
    /// The JWS algorithm of the device key, such as `ES256`.
    public var keyAlgorithm: String
    /// Set when push approvals were turned on for this installation's registered device (``AppInstallation``): the
    /// app id it registered with. Its key is the registered device key, and its tokens are the person's sign-in.
    public var registeredAppId: String?

    /// A state with every field given; ``PushMFAClient/enroll(link:issuer:clientId:clientSecret:key:options:session:clock:)``
    /// makes the one of a newly enrolled device.
    public init(
        issuer: String, realm: String, userId: String, username: String, credentialId: String, deviceId: String, deviceType: String,
        deviceLabel: String, pushProviderId: String, pushProviderType: String, keyAlgorithm: String, registeredAppId: String? = nil
    ) {
        self.issuer = issuer
        self.realm = realm
        self.userId = userId
        self.username = username
        self.credentialId = credentialId
        self.deviceId = deviceId
        self.deviceType = deviceType
        self.deviceLabel = deviceLabel
        self.pushProviderId = pushProviderId
        self.pushProviderType = pushProviderType
        self.keyAlgorithm = keyAlgorithm
        self.registeredAppId = registeredAppId
    }

    /// The state saved in `directory` (its `device.json`), or nil when none is there.
    public static func load(from directory: URL) throws -> DeviceState? {
        let url = directory.appendingPathComponent("device.json")
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try JSONDecoder().decode(DeviceState.self, from: Data(contentsOf: url))
    }

    /// Written to a private temporary file and renamed, so the state is never half-written or readable by others.
    public func save(to directory: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try PrivateFile.createDirectory(directory)
        try PrivateFile.write(try encoder.encode(self), to: directory.appendingPathComponent("device.json"))
    }
}
