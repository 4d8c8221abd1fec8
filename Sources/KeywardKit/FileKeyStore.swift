// A software key store for Linux and tests: one private file per key.
import Foundation
import KeywardJOSE
import KeywardWire

/// A software key store for Linux (and tests): one file per key, `<name>.key`, holding the `StoredKey` JSON,
/// created with mode 0600 inside a 0700 directory.
public struct FileKeyStore: KeyStore {
    /// The directory holding the `<name>.key` files.
    public let directory: URL

    /// A store in `directory`, which is created (mode 0700) at the first write.
    public init(directory: URL) {
        self.directory = directory
    }

    /// The software key under `name`, or nil when it has no file.
    public func key(named name: String) throws -> (any JWSSigner)? {
        let url = try fileURL(name)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        // A file cannot hold a Secure Enclave handle that means anything on this machine.
        guard let stored = StoredKey(json: Array(try Data(contentsOf: url))), stored.storage == .software else {
            throw KeywardKitError.corruptKeyFile(url.path)
        }
        return try stored.softwareKey()
    }

    /// Generates a software key for `algorithm` and writes it under `name`, replacing any key there.
    public func createKey(named name: String, algorithm: JWSAlgorithm) throws -> any JWSSigner {
        let key = try SigningKey.generate(algorithm)
        try store(key, named: name)
        return key
    }

    /// Keeps a software key made elsewhere (an import, a test fixture) under `name`, replacing any key there.
    /// Not part of `KeyStore`: a hardware store can only hold keys it generated itself.
    public func store(_ key: SigningKey, named name: String) throws {
        let url = try fileURL(name)
        try PrivateFile.createDirectory(directory)
        try PrivateFile.write(Data(StoredKey(software: key).json), to: url)
    }

    /// One rename: the destination holds the old key or the new one, never neither.
    public func promoteKey(named source: String, to destination: String) throws {
        let from = try fileURL(source)
        let to = try fileURL(destination)
        guard FileManager.default.fileExists(atPath: from.path) else { throw KeywardKitError.noSuchKey(source) }
        try PrivateFile.move(from, over: to)
    }

    /// Removes the key file of `name`; nothing happens when there is none.
    public func deleteKey(named name: String) throws {
        let url = try fileURL(name)
        if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
    }

    private func fileURL(_ name: String) throws -> URL {
        try KeyName.check(name)
        return directory.appendingPathComponent(name + ".key")
    }
}
