import Foundation
import KeywardJOSE

/// `POST /realms/{realm}/v1/device/rotate-key`, signed by the device's current key: a fresh challenge, the new key,
/// and the new key's signature over the challenge.
struct KeyRotationRequest: Sendable, Equatable {
    var challenge: String
    var newPublicKey: [UInt8]
    var proof: [UInt8]

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
        (self.challenge, newPublicKey, self.proof) = (challenge, point, proof)
    }
}
