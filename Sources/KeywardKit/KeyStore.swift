// Where a device keeps its private keys, and the rule for key names every store follows.
import KeywardJOSE

/// Where a device keeps its private keys: `FileKeyStore` on Linux, `KeychainKeyStore` (Secure Enclave for ES256)
/// on Apple platforms. A store makes its keys itself, because a hardware key is generated inside the hardware and
/// can never be imported; callers only ever see `JWSSigner`s.
public protocol KeyStore: Sendable {
    /// The key stored under `name`, or nil when there is none.
    func key(named name: String) throws -> (any JWSSigner)?

    /// Generates a key for `algorithm` and keeps it under `name`, replacing any key stored there.
    func createKey(named name: String, algorithm: JWSAlgorithm) throws -> any JWSSigner

    /// The key under `name`, created with `algorithm` on first use (an existing key keeps its own algorithm).
    /// A requirement, not only an extension, so a store that can do it in one step may.
    func loadOrCreateKey(named name: String, algorithm: JWSAlgorithm) throws -> any JWSSigner

    /// Makes the key under `source` the key under `destination` and removes `source`; what `destination` held is
    /// gone. Rotation creates the next key under a staging name first, so it is safe before the server switches,
    /// and promotes it once the server has. Throws `KeywardKitError.noSuchKey` when `source` holds no key.
    func promoteKey(named source: String, to destination: String) throws

    /// Removes the key under `name`; nothing happens when there is none.
    func deleteKey(named name: String) throws
}

extension KeyStore {
    /// Loads the key under `name`, or creates one with `algorithm` when there is none.
    public func loadOrCreateKey(named name: String, algorithm: JWSAlgorithm) throws -> any JWSSigner {
        if let existing = try key(named: name) { return existing }
        return try createKey(named: name, algorithm: algorithm)
    }
}

/// The one rule for key names in every store: they become file names and Keychain accounts, so no paths, no dots.
enum KeyName {
    static func check(_ name: String) throws {
        guard !name.isEmpty, name.utf8.count <= 64, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw KeywardKitError.invalidKeyName(name)
        }
    }
}
