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
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
