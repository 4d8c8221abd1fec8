import Foundation
import KeywardJOSE

/// Where a device keeps its private keys. On Apple platforms a Secure Enclave store implements this
/// (issue: push MFA); on Linux the file-backed store below does.
public protocol KeyStore: Sendable {
    /// The key stored under `name`, or nil.
    func key(named name: String) throws -> SigningKey?
    func store(_ key: SigningKey, named name: String) throws
    func deleteKey(named name: String) throws
}

extension KeyStore {
    /// The key under `name`, generating and storing one with `algorithm` on first use.
    public func loadOrCreateKey(named name: String, algorithm: JWSAlgorithm) throws -> SigningKey {
        if let existing = try key(named: name) { return existing }
        let key = try SigningKey.generate(algorithm)
        try store(key, named: name)
        return key
    }
}

/// A software key store: one file per key (`<name>.key`, JSON with the algorithm and base64url key bytes),
/// created with mode 0600 inside a 0700 directory.
public struct FileKeyStore: KeyStore {
    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    public func key(named name: String) throws -> SigningKey? {
        let url = try fileURL(name)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let object = try StrictJSON.parseObject(Array(try Data(contentsOf: url)))
        guard let algorithmName = object["alg"]?.stringValue, let algorithm = JWSAlgorithm(rawValue: algorithmName),
            let encoded = object["key"]?.stringValue
        else { throw KeywardKitError.corruptKeyFile(url.path) }
        return try SigningKey(algorithm: algorithm, serialized: try Base64URL.decode(encoded))
    }

    public func store(_ key: SigningKey, named name: String) throws {
        let url = try fileURL(name)
        try PrivateFile.createDirectory(directory)
        let object: JSONObject = ["alg": .string(key.algorithm.rawValue), "key": .string(Base64URL.encode(key.serialized))]
        try PrivateFile.write(Data(StrictJSON.serialize(object)), to: url)
    }

    public func deleteKey(named name: String) throws {
        let url = try fileURL(name)
        if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
    }

    private func fileURL(_ name: String) throws -> URL {
        guard !name.isEmpty, name.utf8.count <= 64, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw KeywardKitError.invalidKeyName(name)
        }
        return directory.appendingPathComponent(name + ".key")
    }
}
