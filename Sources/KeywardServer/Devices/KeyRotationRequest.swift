// Reading a device's key rotation request: challenge, new key, its proof and optional attestation.
import Foundation
import KeywardJOSE

/// `POST /realms/{realm}/v1/device/rotate-key`, signed by the device's current key: a fresh challenge, the new key,
/// and the new key's signature over the challenge; for a device whose key Android Key Attestation certified, the
/// new key's attestation too (`attestation`, as at registration, bound to this challenge and the new key).
struct KeyRotationRequest: Sendable, Equatable {
    var challenge: String
    /// As sent: the binding nonce hashes this text.
    var newPublicKeyText: String
    var newPublicKey: [UInt8]
    var proof: [UInt8]
    var attestation: RegistrationRequest.Attestation?

    init(json object: JSONObject) throws(DeviceError) {
        guard case .string(let challenge)? = object["challenge"], (1...128).contains(challenge.utf8.count) else {
            throw .invalidRequest("challenge must be the string from /v1/device/challenge")
        }
        guard case .string(let keyText)? = object["new_public_key"], keyText.utf8.count <= 128,
            let point = RegistrationRequest.base64(keyText), point.count == 65, point[0] == 0x04
        else {
            throw DeviceError(.badRequest, .invalidPublicKey, "new_public_key must be the base64 of a 65-byte uncompressed P-256 point")
        }
        guard case .string(let proofText)? = object["proof"], proofText.utf8.count <= 256, let proof = RegistrationRequest.base64(proofText), !proof.isEmpty else {
            throw .invalidRequest("proof must be base64 (the new key's signature over the challenge)")
        }
        (self.challenge, newPublicKeyText, newPublicKey, self.proof) = (challenge, keyText, point, proof)
        attestation = try RegistrationRequest.attestation(object["attestation"])
    }
}
