// Proof Key for Code Exchange with S256 only: the verifier a token request sends against the stored challenge (RFC 7636).
import Crypto
import KeywardJOSE

/// RFC 7636 with the S256 method only (`plain` is refused where the challenge is read, `AuthorizationRequest`): a
/// code verifier is 43-128 unreserved characters (§4.1), and its SHA-256, base64url without padding, must be the
/// challenge of the authorization request (§4.6).
enum PKCE {
    /// RFC 7636 §4.1: `[A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~"`, 43 to 128 of them.
    static func isVerifier(_ text: String) -> Bool {
        (43...128).contains(text.utf8.count) && text.utf8.allSatisfy { byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
        }
    }

    /// The S256 challenge of a verifier (§4.2).
    static func challenge(for verifier: String) -> String {
        Base64URL.encode(SHA256.hash(data: Array(verifier.utf8)))
    }

    /// Whether `verifier` is well formed and its S256 challenge is `challenge`, compared in constant time.
    static func verifies(_ verifier: String, challenge: String) -> Bool {
        guard isVerifier(verifier) else { return false }
        return ConstantTime.equal(Array(Self.challenge(for: verifier).utf8), Array(challenge.utf8))
    }
}
