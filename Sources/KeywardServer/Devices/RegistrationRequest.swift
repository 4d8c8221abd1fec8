// Reading a device registration request strictly, its platform attestation included.
import Foundation
import KeywardAttestation
import KeywardJOSE

/// A device registration as it arrives (`POST /realms/{realm}/v1/device/register`), read strictly: unknown
/// attestation types, wrong member types and oversize values are refused with the member named.
struct RegistrationRequest: Sendable, Equatable {
    /// What the installation's platform said about its key, if it said anything.
    enum Attestation: Sendable, Equatable {
        /// Apple App Attest: the attested key's id (base64) and the attestation object (base64 CBOR).
        case appAttest(keyId: String, object: [UInt8])
        /// Android Key Attestation: the certificate chain, leaf first, DER.
        case androidKey(chain: [[UInt8]])
        /// Play Integrity: the integrity token (compact JWE).
        case playIntegrity(token: String)
    }

    var appId: String
    var deviceId: String?
    var challenge: String
    /// The key as sent (standard or url-safe base64 of the 65-byte uncompressed point): the binding nonce hashes
    /// this exact text.
    var publicKeyText: String
    var publicKey: [UInt8]
    var platform: DeviceApp.Platform
    var attestation: Attestation?
    /// The new key's ECDSA P-256 / SHA-256 signature over the challenge (DER or raw r‖s, base64).
    var proof: [UInt8]

    static let maxChainLength = 8
    static let maxAttestationBytes = 64 * 1024

    init(json object: JSONObject) throws(DeviceError) {
        appId = try Self.string(object, "app_id", limit: 255)
        deviceId = try Self.optionalString(object, "device_id", limit: 128)
        if let deviceId, deviceId.isEmpty || !deviceId.utf8.allSatisfy(Self.isIdentifierByte) {
            throw .invalidRequest("device_id must be 1-128 characters of letters, digits, '-', '_' or '.'")
        }
        challenge = try Self.string(object, "challenge", limit: 128)
        publicKeyText = try Self.string(object, "public_key", limit: 128)
        guard let point = Self.base64(publicKeyText), point.count == 65, point[0] == 0x04 else {
            throw DeviceError(.badRequest, .invalidPublicKey, "public_key must be the base64 of a 65-byte uncompressed P-256 point (0x04 ‖ x ‖ y)")
        }
        publicKey = point
        let platformName = try Self.string(object, "platform", limit: 16)
        guard let platform = DeviceApp.Platform(rawValue: platformName.lowercased()) else {
            throw .invalidRequest("platform must be 'ios' or 'android'")
        }
        self.platform = platform
        let proofText = try Self.string(object, "proof", limit: 256)
        guard let proof = Self.base64(proofText), !proof.isEmpty else { throw .invalidRequest("proof must be base64 (the key's signature over the challenge)") }
        self.proof = proof
        attestation = try Self.attestation(object["attestation"])
    }

    static func attestation(_ value: JSONValue?) throws(DeviceError) -> Attestation? {
        guard let value, value != .null else { return nil }
        guard case .object(let object) = value else { throw .invalidRequest("attestation must be an object with a type") }
        let type = try string(object, "type", limit: 32, in: "attestation")
        switch type {
        case "app-attest":
            let keyId = try string(object, "keyId", limit: 128, in: "attestation")
            let text = try string(object, "object", limit: maxAttestationBytes * 4 / 3 + 4, in: "attestation")
            guard let bytes = base64(text) else { throw .invalidRequest("attestation.object must be base64") }
            return .appAttest(keyId: keyId, object: bytes)
        case "android-key":
            guard case .array(let items)? = object["chain"], !items.isEmpty, items.count <= maxChainLength else {
                throw .invalidRequest("attestation.chain must be an array of 1-\(maxChainLength) base64 DER certificates, leaf first")
            }
            var chain: [[UInt8]] = []
            for (index, item) in items.enumerated() {
                guard case .string(let text) = item, text.utf8.count <= maxAttestationBytes, let der = base64(text), !der.isEmpty else {
                    throw .invalidRequest("attestation.chain[\(index)] must be a base64 DER certificate")
                }
                chain.append(der)
            }
            return .androidKey(chain: chain)
        case "play-integrity":
            return .playIntegrity(token: try string(object, "token", limit: maxAttestationBytes, in: "attestation"))
        default:
            throw .invalidRequest("attestation.type must be app-attest, android-key or play-integrity")
        }
    }

    private static func string(_ object: JSONObject, _ name: String, limit: Int, in parent: String? = nil) throws(DeviceError) -> String {
        let member = parent.map { "\($0).\(name)" } ?? name
        guard let value = try optionalString(object, name, limit: limit, member: member) else { throw .invalidRequest("missing member: \(member)") }
        return value
    }

    private static func optionalString(_ object: JSONObject, _ name: String, limit: Int, member: String? = nil) throws(DeviceError) -> String? {
        let member = member ?? name
        switch object[name] {
        case nil, .null?: return nil
        case .string(let value)?:
            guard !value.isEmpty, value.utf8.count <= limit else { throw .invalidRequest("\(member) must be 1-\(limit) bytes") }
            return value
        default: throw .invalidRequest("\(member) must be a string")
        }
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    /// Standard or url-safe base64, padded or not (device SDKs send both).
    static func base64(_ text: String) -> [UInt8]? {
        Base64Variants.decode(text)
    }
}
