// Device keys in the Apple Keychain, ES256 ones inside the Secure Enclave when the device has one.
#if canImport(CryptoKit) && canImport(Security) && (os(iOS) || os(macOS) || os(visionOS))
import CryptoKit
import Foundation
import KeywardJOSE
import Security

/// Device keys in the Keychain, for Apple platforms. An ES256 key is generated inside the Secure Enclave when the
/// device has one, and the item holds only the enclave's encrypted handle; other algorithms (the enclave signs
/// P-256 only), or a device without an enclave, get a software key whose bytes are the item. Either way the item
/// is a generic password (`service`, account = key name) holding `StoredKey` JSON, readable only while the device
/// is unlocked, never synchronized, never restored onto another device.
public struct KeychainKeyStore: KeyStore {
    /// The Keychain service name used when none is given.
    public static let defaultService = "com.keyward.device-keys"

    /// The Keychain service the items are filed under; each key is one item whose account is the key's name.
    public let service: String
    /// A keychain access group shared with app extensions, or nil for the app's default group.
    public let accessGroup: String?

    /// A store under `service`, in `accessGroup` when app extensions share the keys.
    public init(service: String = KeychainKeyStore.defaultService, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    /// The key under `name` — a Secure Enclave key or a software key — or nil when there is none.
    public func key(named name: String) throws -> (any JWSSigner)? {
        try KeyName.check(name)
        guard let data = try readItem(name) else { return nil }
        guard let stored = StoredKey(json: Array(data)) else {
            throw KeywardKitError.unusableKey(name, reason: "its Keychain item is not a stored key")
        }
        switch stored.storage {
        case .software:
            return try stored.softwareKey()
        case .secureEnclave:
            let key: SecureEnclave.P256.Signing.PrivateKey
            do {
                key = try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: Data(stored.bytes))
            } catch {
                throw KeywardKitError.unusableKey(name, reason: "the Secure Enclave refuses its handle (\(error))")
            }
            return try SecureEnclaveSigner(key)
        }
    }

    /// Generates a key under `name`, replacing any key there: inside the Secure Enclave for ES256 when the device
    /// has one, in software otherwise.
    public func createKey(named name: String, algorithm: JWSAlgorithm) throws -> any JWSSigner {
        try KeyName.check(name)
        if algorithm == .es256, SecureEnclave.isAvailable {
            let key: SecureEnclave.P256.Signing.PrivateKey
            do {
                key = try SecureEnclave.P256.Signing.PrivateKey(accessControl: try Self.enclaveAccessControl(name))
            } catch let error as KeywardKitError {
                throw error
            } catch {
                throw KeywardKitError.unusableKey(name, reason: "the Secure Enclave could not make it (\(error))")
            }
            let signer = try SecureEnclaveSigner(key)
            try writeItem(StoredKey(algorithm: .es256, storage: .secureEnclave, bytes: Array(key.dataRepresentation)), name)
            return signer
        }
        let key = try SigningKey.generate(algorithm)
        try writeItem(StoredKey(software: key), name)
        return key
    }

    /// Copies, then deletes: a failure in between leaves the new key under both names, never under neither.
    public func promoteKey(named source: String, to destination: String) throws {
        try KeyName.check(source)
        try KeyName.check(destination)
        guard let data = try readItem(source) else { throw KeywardKitError.noSuchKey(source) }
        guard source != destination else { return }
        try writeItem(data, destination)
        try deleteItem(source)
    }

    /// Removes the item of key `name`; nothing happens when there is none.
    public func deleteKey(named name: String) throws {
        try KeyName.check(name)
        try deleteItem(name)
    }

    // MARK: - Keychain items

    /// The enclave key is usable only on this device and only while it is unlocked.
    private static func enclaveAccessControl(_ name: String) throws -> SecAccessControl {
        var error: Unmanaged<CFError>?
        guard let access = SecAccessControlCreateWithFlags(
            kCFAllocatorDefault, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .privateKeyUsage, &error
        ) else {
            let reason = error.map { String(describing: $0.takeRetainedValue()) } ?? "no reason given"
            throw KeywardKitError.unusableKey(name, reason: "no Secure Enclave access control (\(reason))")
        }
        return access
    }

    /// What identifies the item of key `name`.
    private func itemQuery(_ name: String) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: name,
            // On macOS too the iOS-style keychain: the file-based one ignores kSecAttrAccessible.
            kSecUseDataProtectionKeychain as String: true,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    private func readItem(_ name: String) throws -> Data? {
        var query = itemQuery(name)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess else { throw KeywardKitError.keychain(key: name, operation: "read", status: status) }
        guard let data = result as? Data else { throw KeywardKitError.unusableKey(name, reason: "its Keychain item holds no data") }
        return data
    }

    private func writeItem(_ stored: StoredKey, _ name: String) throws {
        try writeItem(Data(stored.json), name)
    }

    /// Adds the item, or replaces the data of the existing one; either way with this device only, unlocked only.
    private func writeItem(_ data: Data, _ name: String) throws {
        var attributes = itemQuery(name)
        attributes[kSecValueData as String] = data
        attributes[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        attributes[kSecAttrSynchronizable as String] = false
        var status = SecItemAdd(attributes as CFDictionary, nil)
        if status == errSecDuplicateItem {
            let changes: [String: Any] = [
                kSecValueData as String: data,
                kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
            ]
            status = SecItemUpdate(itemQuery(name) as CFDictionary, changes as CFDictionary)
        }
        guard status == errSecSuccess else { throw KeywardKitError.keychain(key: name, operation: "write", status: status) }
    }

    private func deleteItem(_ name: String) throws {
        let status = SecItemDelete(itemQuery(name) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw KeywardKitError.keychain(key: name, operation: "delete", status: status)
        }
    }
}
#endif
