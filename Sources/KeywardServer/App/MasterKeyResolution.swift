// Where the master key comes from at start-up: the `masterKey` setting, or the embedded database's key file.
import Crypto
import Foundation
import KeywardWire

extension MasterKey {
    /// The master key from `masterKey` (base64) or, for the embedded database only, a key file in the data
    /// directory created on first start with mode 0600. The file is on disk before the key seals anything: a power
    /// loss must not keep the database's sealed keys and lose the key that opens them. A database with no key file
    /// beside it is refused rather than given a new key: its sealed keys would never open again.
    static func resolve(configuration: KeywardConfiguration, database: DatabaseConfiguration) throws -> MasterKey {
        if let encoded = configuration.masterKey {
            return try MasterKey(bytes: Array(Data(base64Encoded: encoded) ?? Data()))
        }
        guard case .sqlite(let databasePath) = database else {
            throw ConfigurationError(
                setting: "masterKey",
                problem: "is required with PostgreSQL so every node opens the same keys (generate one with `openssl rand -base64 32`)"
            )
        }
        let path = configuration.dataDirectory + "/master.key"
        let fileManager = FileManager.default
        if fileManager.fileExists(atPath: path) {
            let attributes = try fileManager.attributesOfItem(atPath: path)
            if let mode = attributes[.posixPermissions] as? Int, mode & 0o077 != 0 {
                throw ConfigurationError(setting: "masterKey", problem: "key file \(path) is readable by other users (mode \(String(mode, radix: 8))); chmod 600 it")
            }
            let text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let bytes = Data(base64Encoded: text) else {
                throw ConfigurationError(setting: "masterKey", problem: "key file \(path) is not base64")
            }
            return try MasterKey(bytes: Array(bytes))
        }
        let databaseSize = (try? fileManager.attributesOfItem(atPath: databasePath)[.size] as? NSNumber)?.intValue ?? 0
        guard databaseSize == 0 else {
            throw ConfigurationError(
                setting: "masterKey",
                problem: "the database \(databasePath) exists but its key file \(path) does not: the database's secrets are sealed with "
                    + "that key. Put the file back (or set KEYWARD_MASTER_KEY); `keyward restore --master-key-file` puts back a backup with its key"
            )
        }
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        do {
            try PrivateFile.createDirectory(URL(fileURLWithPath: configuration.dataDirectory))
            try PrivateFile.write(Data((bytes.base64EncodedString() + "\n").utf8), to: URL(fileURLWithPath: path))
        } catch {
            throw ConfigurationError(setting: "dataDir", problem: "cannot write the master key file \(path): \(error)")
        }
        return try MasterKey(bytes: Array(bytes))
    }
}
