import Foundation

/// What an enrolled device remembers, kept as `device.json` (mode 0600) beside its key.
public struct DeviceState: Codable, Sendable, Equatable {
    public var issuer: String
    public var realm: String
    public var userId: String
    public var username: String
    public var credentialId: String
    public var deviceId: String
    public var deviceType: String
    public var deviceLabel: String
    public var pushProviderId: String
    public var pushProviderType: String
    public var keyAlgorithm: String

    public init(
        issuer: String, realm: String, userId: String, username: String, credentialId: String, deviceId: String, deviceType: String,
        deviceLabel: String, pushProviderId: String, pushProviderType: String, keyAlgorithm: String
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
    }

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
