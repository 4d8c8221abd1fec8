/// The single error type of KeywardJOSE. `code` is stable and safe to expose to clients and metrics;
/// `message` is for humans and names the member or input at fault.
public struct JOSEError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case tooLarge = "too_large"
        case malformed
        case badBase64URL = "bad_base64url"
        case badJSON = "bad_json"
        case duplicateMember = "duplicate_member"
        case unsupportedCritical = "unsupported_crit"
        case unsupportedB64 = "unsupported_b64"
        case missingAlgorithm = "missing_alg"
        case algorithmNotAllowed = "alg_not_allowed"
        case algorithmKeyMismatch = "alg_key_mismatch"
        case unsupportedKey = "unsupported_key"
        case weakKey = "weak_key"
        case privateKeyMaterial = "private_key_material"
        case invalidKey = "invalid_key"
        case unknownKeyID = "unknown_kid"
        case missingKeyID = "missing_kid"
        case badSignature = "bad_signature"
        case typeMismatch = "typ_mismatch"
        case missingClaim = "missing_claim"
        case invalidClaim = "invalid_claim"
        case expired
        case notYetValid = "not_yet_valid"
        case issuedInFuture = "iat_in_future"
        case issuerMismatch = "iss_mismatch"
        case audienceMismatch = "aud_mismatch"
        case lifetimeTooLong = "lifetime_too_long"
        /// JWE: no `enc` header member.
        case missingEncryption = "missing_enc"
        /// JWE: an `enc` other than the one content encryption implemented (A256GCM).
        case encryptionNotAllowed = "enc_not_allowed"
        /// JWE: a `zip` header member; compressed plaintext is refused.
        case unsupportedCompression = "unsupported_zip"
        /// JWE: the encrypted key fails AES Key Wrap's integrity check (a wrong key-encryption key, or an altered key).
        case keyUnwrapFailed = "key_unwrap_failed"
        /// JWE: AES-GCM refuses the tag (an altered header, IV, ciphertext or tag).
        case decryptionFailed = "decryption_failed"
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
