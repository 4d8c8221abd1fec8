// Reading the files and URLs push settings name, each failure naming the setting.
import Foundation
import KeywardJOSE

/// Reads the files push settings name, turning every failure into a `PushConfigurationError` that names the setting
/// and the file.
enum PushSettingFile {
    /// Key files and service accounts are a few KiB; anything this big is the wrong file.
    static let maximumSize = 1 << 20

    static func contents(setting: String, path: String) throws(PushConfigurationError) -> Data {
        guard !path.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw PushConfigurationError(setting: setting, problem: "not set")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw PushConfigurationError(setting: setting, file: path, problem: "cannot be read (\(Self.reason(error)))")
        }
        guard data.count <= maximumSize else {
            throw PushConfigurationError(setting: setting, file: path, problem: "is larger than \(maximumSize) bytes")
        }
        return data
    }

    static func signingKey(
        setting: String, path: String, pem: String, expected: PushPrivateKeyPEM.KeyType
    ) throws(PushConfigurationError) -> SigningKey {
        do {
            return try PushPrivateKeyPEM.signingKey(pem: pem, expected: expected)
        } catch {
            throw PushConfigurationError(setting: setting, file: path, problem: error.message)
        }
    }

    /// "no such file" rather than Foundation's long "The operation could not be completed…" sentence.
    private static func reason(_ error: any Error) -> String {
        switch (error as? CocoaError)?.code {
        case .fileReadNoSuchFile?, .fileNoSuchFile?: "no such file"
        case .fileReadNoPermission?: "permission denied"
        default: error.localizedDescription
        }
    }
}

/// Settings that hold URLs are checked at start-up too.
enum PushSettingURL {
    static func parse(setting: String, value: String, schemes: Set<String>, example: String) throws(PushConfigurationError) -> URL {
        guard let url = URL(string: value), let scheme = url.scheme?.lowercased(), schemes.contains(scheme),
              let host = url.host, !host.isEmpty else {
            let allowed = schemes.sorted().joined(separator: " or ")
            throw PushConfigurationError(setting: setting, problem: "\"\(value)\" is not an \(allowed) URL like \(example)")
        }
        return url
    }
}
