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
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let url = directory.appendingPathComponent("device.json")
        let temporary = url.appendingPathExtension("tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: try encoder.encode(self), attributes: [.posixPermissions: 0o600]) else {
            throw KeywardKitError.cannotWrite(temporary.path)
        }
        if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
        try FileManager.default.moveItem(at: temporary, to: url)
    }
}
