// Reading a device's P-256 signature, DER or raw r‖s.
import Crypto

/// How devices write P-256 signatures: DER (iOS `SecKeyCreateSignature`, Android `SHA256withECDSA`) or the raw
/// 64-byte r‖s some native bridges produce. Registration proofs, rotation proofs and signed requests read them here.
enum DeviceSignature {
    static func ecdsa(_ bytes: [UInt8]) -> P256.Signing.ECDSASignature? {
        bytes.count == 64
            ? try? P256.Signing.ECDSASignature(rawRepresentation: bytes)
            : try? P256.Signing.ECDSASignature(derRepresentation: bytes)
    }
}
