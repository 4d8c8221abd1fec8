/// What a registered device signs for each request (the README's "Signed requests"), in one place for the server that
/// checks it and KeywardKit that makes it:
///
///     METHOD "\n" PATH[?QUERY] "\n" TIMESTAMP "\n" NONCE "\n" hex(SHA-256(BODY))
///
/// Each side hashes the body with its own SHA-256 (this module has no crypto) and passes the lowercase hex digest.
public enum SignedRequestMessage {
    public static func bytes(method: String, target: String, timestamp: String, nonce: String, bodyDigestHex: String) -> [UInt8] {
        Array([method.uppercased(), target, timestamp, nonce, bodyDigestHex].joined(separator: "\n").utf8)
    }
}
