// Reading a device's public key from an enrollment or rotation request under the original's rules.
import Foundation
import KeywardJOSE

/// Reads a device public key sent in `cnf.jwk` (enrollment) or `publicKeyJwk` (rotation), with the original's
/// rules (docs/PUSH-MFA-PROTOCOL.md §3.4 step 6, §3.9, §4.7): public RSA or EC only, RS*/ES* algorithms, fixed curves.
enum DeviceKeyInput {
    /// `cnf.jwk` of an enrollment JWT signed with `algorithm`.
    static func enrollmentKey(_ claims: JSONObject, algorithm: JWSAlgorithm) throws(PushMFAError) -> JWK {
        guard case .object(let confirmation)? = claims["cnf"], let value = confirmation["jwk"] else {
            throw PushMFAError.badRequest("Enrollment token is missing cnf.jwk claim")
        }
        let key = try publicKey(value, field: "cnf.jwk")
        // The JWK's own `alg` is optional here, but pins the algorithm when present.
        guard key.fits(algorithm) else {
            throw PushMFAError.badRequest("JWK algorithm mismatch")
        }
        return key
    }

    /// `publicKeyJwk` of a rotation request: `alg` is required and decides every later signature.
    static func rotationKey(_ value: JSONValue?) throws(PushMFAError) -> JWK {
        guard let value else { throw PushMFAError.missingField("publicKeyJwk") }
        guard let object = value.objectValue else { throw PushMFAError.badRequest("publicKeyJwk must be a JSON object") }
        guard let algorithmName = object["alg"]?.stringValue else { throw PushMFAError.badRequest("JWK missing alg") }
        guard let algorithm = JWSAlgorithm(rawValue: algorithmName), DeviceAuthenticator.algorithms.contains(algorithm) else {
            throw PushMFAError.badRequest("Unsupported key algorithm: \(algorithmName.prefix(16))")
        }
        let key = try publicKey(value, field: "publicKeyJwk")
        guard key.isCompatible(with: algorithm) else { throw PushMFAError.badRequest("JWK algorithm mismatch") }
        return key
    }

    private static func publicKey(_ value: JSONValue, field: String) throws(PushMFAError) -> JWK {
        guard let object = value.objectValue else { throw PushMFAError.badRequest("\(field) must be a JSON object") }
        guard object.keys.allSatisfy({ !PushMFAInput.privateKeyMembers.contains($0) }) else {
            throw PushMFAError.badRequest("JWK must not contain private key parameters")
        }
        guard StrictJSON.serialize(object).count <= PushMFALimits.jwkJSONLength else { throw PushMFAError.fieldTooLong(field) }
        guard let kty = object["kty"]?.stringValue, kty == "RSA" || kty == "EC" else {
            throw PushMFAError.badRequest("Unsupported key type in \(field): only RSA and EC keys are accepted")
        }
        do {
            // Stored and thumbprinted in full-size form, so a token bound to the key matches it later.
            return try JWK(json: object, coordinates: .padShort)
        } catch where error.code == .algorithmKeyMismatch {
            throw PushMFAError.badRequest("JWK algorithm mismatch")
        } catch {
            throw PushMFAError.badRequest("Invalid \(field): \(error.message)")
        }
    }
}
