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
