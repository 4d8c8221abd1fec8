// The master key that seals secrets at rest, bound to their rows, and where it comes from.
import Crypto
import Foundation

/// The key that seals secrets at rest (realm private keys). AES-256-GCM; the additional data binds each
/// ciphertext to the row it belongs to, so a sealed key copied into another row does not open.
public struct MasterKey: Sendable {
    private let key: SymmetricKey
    /// Format version prefixed to every sealed blob, so the scheme can change later.
    private static let version: UInt8 = 1

    public init(bytes: [UInt8]) throws {
        guard bytes.count == 32 else {
            throw ConfigurationError(setting: "masterKey", problem: "must be exactly 32 bytes, got \(bytes.count)")
        }
        key = SymmetricKey(data: bytes)
    }

    private init(key: SymmetricKey) { self.key = key }

    public static func generate() -> MasterKey { MasterKey(key: SymmetricKey(size: .bits256)) }

    /// A key for one purpose, derived with HKDF so no two uses share key material with the sealing key.
    func derivedKey(purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Array(purpose.utf8), outputByteCount: 32)
    }

    public func seal(_ plaintext: [UInt8], context: String) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Array(context.utf8))
        return [Self.version] + Array(box.combined!)
    }

    public func open(_ sealed: [UInt8], context: String) throws -> [UInt8] {
        guard sealed.first == Self.version, sealed.count > 1 + 12 + 16 else { throw MasterKeyError.malformed }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed.dropFirst())
            return Array(try AES.GCM.open(box, using: key, authenticating: Array(context.utf8)))
        } catch {
            throw MasterKeyError.wrongKeyOrTampered
        }
    }
}

public enum MasterKeyError: Error, CustomStringConvertible {
    case malformed
    case wrongKeyOrTampered

    public var description: String {
        switch self {
        case .malformed: "sealed secret is malformed"
        case .wrongKeyOrTampered: "sealed secret does not open with this master key (wrong KEYWARD_MASTER_KEY, or the row was tampered with)"
        }
    }
}

extension MasterKey {
    /// The master key from `masterKey` (base64) or, for the embedded database only, a key file in the data
    /// directory created on first start with mode 0600.
    static func resolve(configuration: KeywardConfiguration, embedded: Bool) throws -> MasterKey {
        if let encoded = configuration.masterKey {
            return try MasterKey(bytes: Array(Data(base64Encoded: encoded) ?? Data()))
        }
        guard embedded else {
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
        try fileManager.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        guard fileManager.createFile(atPath: path, contents: Data((bytes.base64EncodedString() + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ConfigurationError(setting: "dataDir", problem: "cannot write \(path)")
        }
        return try MasterKey(bytes: Array(bytes))
    }
}
