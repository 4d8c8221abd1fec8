// Where device registration states are kept, and the file-based store that writes them atomically.
import Crypto
import Foundation
import KeywardJOSE
import KeywardWire

/// Where a ``DeviceRegistrar`` keeps each app's ``DeviceRegistrationState``. A save must replace the whole state at
/// once: a reader sees the previous state or the new one, never a mixture.
public protocol DeviceRegistrationStore: Sendable {
    /// The state saved for `appId`, or nil when there is none.
    func state(appId: String) throws -> DeviceRegistrationState?

    /// Replaces the state of `state.appId`.
    func save(_ state: DeviceRegistrationState) throws
}

/// Registration states as files beside the push-MFA `device.json`: `registration-<app id>.json`, mode 0600 in a
/// 0700 directory, each written to a temporary file and renamed over the old one.
public struct FileDeviceRegistrationStore: DeviceRegistrationStore {
    /// The directory holding the state files (keyward-device's `--state-dir`).
    public let directory: URL

    /// A store in `directory`, which is created (mode 0700) at the first save.
    public init(directory: URL) {
        self.directory = directory
    }

    public func state(appId: String) throws -> DeviceRegistrationState? {
        let url = try fileURL(appId)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let state = try? decoder.decode(DeviceRegistrationState.self, from: Data(contentsOf: url)), state.appId == appId else {
            throw KeywardKitError.corruptStateFile(url.path)
        }
        return state
    }

    public func save(_ state: DeviceRegistrationState) throws {
        let url = try fileURL(state.appId)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        try PrivateFile.createDirectory(directory)
        try PrivateFile.write(try encoder.encode(state), to: url)
    }

    /// The file of `appId`. App ids are file-name safe already; one too long for a file name is named by its digest
    /// (the file still holds the id, and loading checks it).
    func fileURL(_ appId: String) throws -> URL {
        try DeviceAppId.check(appId)
        let name = appId.utf8.count <= 200
            ? appId
            : "sha256-" + HexDigit.lowercase(SHA256.hash(data: Array(appId.utf8)))
        return directory.appendingPathComponent("registration-\(name).json")
    }
}
