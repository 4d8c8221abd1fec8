import Foundation
import KeywardJOSE

/// Signs DPoP proofs (RFC 9449) with one device key, software or hardware.
public final class DPoPSigner: Sendable {
    public let key: any JWSSigner
    public let thumbprint: String
    private let clock: @Sendable () -> Date

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
