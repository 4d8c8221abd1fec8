// The left-half hashes OpenID Connect binds an id_token to what came with it (at_hash, c_hash).
import Crypto

/// OpenID Connect Core §3.1.3.6 and §3.3.2.11: the left half of the hash the JWS algorithm names, base64url.
/// EdDSA names no hash of its own; SHA-512 is Ed25519's, as OpenID's registrations of EdDSA use.
public enum TokenHash {
    /// `at_hash` of an access token (or `c_hash` of a code) for an id_token signed with `algorithm`.
    public static func leftHalf(of token: String, algorithm: JWSAlgorithm) -> String {
        let bytes = Array(token.utf8)
        let digest: [UInt8] = switch algorithm {
        case .es384, .rs384: Array(SHA384.hash(data: bytes))
        case .es512, .rs512, .edDSA: Array(SHA512.hash(data: bytes))
        case .es256, .rs256, .ps256: Array(SHA256.hash(data: bytes))
        }
        return Base64URL.encode(digest.prefix(digest.count / 2))
    }
}
