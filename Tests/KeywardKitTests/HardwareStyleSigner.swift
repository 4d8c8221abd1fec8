// Test support: a P-256 signer and key store that behave like the Secure Enclave's, built on swift-crypto.
import Crypto
import Foundation
import KeywardJOSE
import KeywardKit
import Synchronization

/// A P-256 signer built straight on swift-crypto, the way `SecureEnclaveSigner` is built on CryptoKit: not a
/// `SigningKey`, public JWK made from the raw point, signatures converted to r || s. If KeywardKit works with this,
/// it works with a key it cannot see inside.
struct HardwareStyleSigner: JWSSigner {
    struct Refused: Error {}

    let key: P256.Signing.PrivateKey
    let publicJWK: JWK
    var algorithm: JWSAlgorithm { .es256 }

    init(_ key: P256.Signing.PrivateKey = P256.Signing.PrivateKey()) throws {
        self.key = key
        let point = Array(key.publicKey.rawRepresentation)
        publicJWK = try JWK(material: .ec(curve: "P-256", x: Array(point[..<32]), y: Array(point[32...])), alg: .es256)
    }

    func sign(_ signingInput: [UInt8]) throws -> [UInt8] {
        Array(try key.signature(for: signingInput).rawRepresentation)
    }
}

/// A store like the Secure Enclave: it makes only ES256 keys, only itself, and keeps them in memory.
final class HardwareStyleKeyStore: KeyStore {
    struct UnsupportedAlgorithm: Error {}

    private let keys = Mutex<[String: HardwareStyleSigner]>([:])

    var names: [String] { keys.withLock { $0.keys.sorted() } }

    func key(named name: String) throws -> (any JWSSigner)? {
        keys.withLock { $0[name] }
    }

    func createKey(named name: String, algorithm: JWSAlgorithm) throws -> any JWSSigner {
        guard algorithm == .es256 else { throw UnsupportedAlgorithm() }
        let signer = try HardwareStyleSigner()
        keys.withLock { $0[name] = signer }
        return signer
    }

    func promoteKey(named source: String, to destination: String) throws {
        try keys.withLock { keys in
            guard let signer = keys.removeValue(forKey: source) else { throw KeywardKitError.noSuchKey(source) }
            keys[destination] = signer
        }
    }

    func deleteKey(named name: String) throws {
        _ = keys.withLock { $0.removeValue(forKey: name) }
    }
}
