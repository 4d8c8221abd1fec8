// Signing JWS with an ES256 key that never leaves the Secure Enclave, on Apple platforms.
#if canImport(CryptoKit) && canImport(Security) && (os(iOS) || os(macOS) || os(visionOS))
import CryptoKit
import Foundation
import KeywardJOSE

/// An ES256 key inside the Secure Enclave. The private key never leaves the enclave; `key` holds only the handle
/// the enclave decrypts for each signature. Made and stored by `KeychainKeyStore`.
///
/// `@unchecked Sendable`: the handle is immutable and the enclave serializes its own work, but not every SDK marks
/// CryptoKit's Secure Enclave key types Sendable.
struct SecureEnclaveSigner: @unchecked Sendable, JWSSigner {
    let key: SecureEnclave.P256.Signing.PrivateKey
    let publicJWK: JWK

    var algorithm: JWSAlgorithm { .es256 }

    init(_ key: SecureEnclave.P256.Signing.PrivateKey) throws {
        self.key = key
        // rawRepresentation of a P-256 public key is x || y, 32 bytes each.
        let point = Array(key.publicKey.rawRepresentation)
        publicJWK = try JWK(material: .ec(curve: "P-256", x: Array(point[..<32]), y: Array(point[32...])), alg: .es256)
    }

    /// The enclave hashes with SHA-256 and signs; JWS wants the raw r || s, not the DER form.
    func sign(_ signingInput: [UInt8]) throws -> [UInt8] {
        Array(try key.signature(for: signingInput).rawRepresentation)
    }
}
#endif
