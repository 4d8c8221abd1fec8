// A device's ES256 key as the device API uses it: public point, DER signatures, binding nonce.
import Crypto
import Foundation
import KeywardJOSE

/// What the device API needs of a device key: an ES256 key (P-256, the curve of the Secure Enclave and Android
/// Keystore), its public point, and DER signatures.
struct DeviceKey: Sendable {
    let name: String
    let signer: any JWSSigner
    /// The uncompressed point, 0x04 ‖ x ‖ y (65 bytes).
    let publicPoint: [UInt8]

    init(name: String, signer: any JWSSigner) throws(KeywardKitError) {
        guard signer.algorithm == .es256, case .ec("P-256", let x, let y) = signer.publicJWK.material, x.count == 32, y.count == 32 else {
            throw .unusableKey(name, reason: "a device key must be ES256 (P-256), not \(signer.algorithm.rawValue)")
        }
        self.name = name
        self.signer = signer
        publicPoint = [0x04] + x + y
    }

    /// The point as the registration sends it (standard base64); the binding nonce hashes this exact text.
    var publicKeyText: String { Data(publicPoint).base64EncodedString() }

    /// The ECDSA P-256 / SHA-256 signature over `message` in DER, as the device API's headers and proofs carry it.
    func derSignature(_ message: [UInt8]) throws -> [UInt8] {
        // JWS signers answer r ‖ s.
        let raw = try signer.sign(message)
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: raw) else {
            throw KeywardKitError.unusableKey(name, reason: "its signature is not 64 bytes of r ‖ s")
        }
        return Array(signature.derRepresentation)
    }

    /// SHA-256(challenge ‖ public_key) over the strings as sent: what ties an attestation to this registration.
    static func bindingNonce(challenge: String, publicKeyText: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(challenge.utf8) + Array(publicKeyText.utf8)))
    }
}
