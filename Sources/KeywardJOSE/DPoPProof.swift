// Creating DPoP proofs, for the client SDK and for tests.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Crypto

/// Creating DPoP proofs (RFC 9449 §4.2), for the SDK and for tests.
public enum DPoPProof {
    public static func make<Signer: JWSSigner>(
        key: Signer,
        method: String,
        url: String,
        issuedAt: Date,
        jti: String? = nil,
        accessToken: String? = nil,
        nonce: String? = nil,
        extraClaims: JSONObject = [:],
        extraHeader: JSONObject = [:]
    ) throws(Signer.SigningError) -> String {
        var header: JSONObject = ["typ": "dpop+jwt", "jwk": .object(key.publicJWK.requiredMembers)]
        for (name, value) in extraHeader { header[name] = value }

        var claims: JSONObject = [
            "jti": .string(jti ?? randomJTI()),
            "htm": .string(method),
            "htu": .string(stripQueryAndFragment(url)),
            "iat": .number(issuedAt.timeIntervalSince1970.rounded(.down)),
        ]
        if let accessToken { claims["ath"] = .string(accessTokenHash(accessToken)) }
        if let nonce { claims["nonce"] = .string(nonce) }
        // Extras win so that tests can build deliberately wrong proofs through the same path.
        for (name, value) in extraClaims { claims[name] = value }
        return try JWS.sign(header: header, claims: claims, key: key)
    }

    /// `ath`: base64url(SHA-256(ASCII access token)), RFC 9449 §4.2.
    public static func accessTokenHash(_ token: String) -> String {
        Base64URL.encode(SHA256.hash(data: Array(token.utf8)))
    }

    /// 16 bytes from the system CSPRNG.
    public static func randomJTI() -> String {
        Base64URL.encode(SecureRandom.bytes(16))
    }

    /// RFC 9449 §4.2: htu is the target URI without query and fragment.
    static func stripQueryAndFragment(_ url: String) -> String {
        guard let cut = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return url }
        return String(url[..<cut])
    }
}
