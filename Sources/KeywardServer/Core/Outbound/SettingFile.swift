// Reading the files and URLs settings name (push keys, service accounts), each failure naming the setting.
import Foundation
import KeywardJOSE

/// Reads the files push settings name, turning every failure into a `SettingError` that names the setting
/// and the file.
enum SettingFile {
    /// Key files and service accounts are a few KiB; anything this big is the wrong file.
    static let maximumSize = 1 << 20

    static func contents(setting: String, path: String) throws(SettingError) -> Data {
        guard !path.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw SettingError(setting: setting, problem: "not set")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw SettingError(setting: setting, file: path, problem: "cannot be read (\(Self.reason(error)))")
        }
        guard data.count <= maximumSize else {
            throw SettingError(setting: setting, file: path, problem: "is larger than \(maximumSize) bytes")
        }
        return data
    }

    static func signingKey(
        setting: String, path: String, pem: String, expected: PrivateKeyPEM.KeyType
    ) throws(SettingError) -> SigningKey {
        do {
            return try PrivateKeyPEM.signingKey(pem: pem, expected: expected)
        } catch {
            throw SettingError(setting: setting, file: path, problem: error.message)
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
    static func parse(setting: String, value: String, schemes: Set<String>, example: String) throws(SettingError) -> URL {
        guard let url = URL(string: value), let scheme = url.scheme?.lowercased(), schemes.contains(scheme),
              let host = url.host, !host.isEmpty else {
            let allowed = schemes.sorted().joined(separator: " or ")
            throw SettingError(setting: setting, problem: "\"\(value)\" is not an \(allowed) URL like \(example)")
        }
        return url
    }
}
