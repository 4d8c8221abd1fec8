// Signing DPoP proofs for an app's requests with one device key, software or hardware.
import Foundation
import KeywardJOSE

/// Signs DPoP proofs (RFC 9449) with one device key, software or hardware.
public final class DPoPSigner: Sendable {
    /// The device key the proofs are signed with; its public JWK goes into each proof's header.
    public let key: any JWSSigner
    /// The key's RFC 7638 SHA-256 thumbprint: what an access token bound to it carries as `cnf.jkt`.
    public let thumbprint: String
    private let clock: @Sendable () -> Date

    /// A signer for `key`; `clock` gives each proof's `iat` (tests pass a fixed one).
    public init(key: any JWSSigner, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.key = key
        self.thumbprint = key.publicJWK.thumbprint()
        self.clock = clock
    }

    /// A proof for one request. `accessToken` adds `ath`; `extraClaims` carries e.g. push-MFA's `sub`/`deviceId`.
    public func proof(method: String, url: String, accessToken: String? = nil, nonce: String? = nil, extraClaims: JSONObject = [:]) throws -> String {
        try DPoPProof.make(key: key, method: method, url: url, issuedAt: clock(), accessToken: accessToken, nonce: nonce, extraClaims: extraClaims)
    }
}
