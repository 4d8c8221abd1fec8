// A push-MFA device's JWT parsed under a size cap and an algorithm allow-list, before its signature is checked.
import KeywardJOSE

/// A JWS a push-MFA device sent (enrollment JWT, login JWT), parsed but not yet verified: the signature is
/// checked later with the key that applies. The caller gives the size cap and the algorithm allow-list; its
/// error messages are its own (the push-MFA API maps `Failure` to the original's wording).
package struct DeviceJWT: Sendable {
    package enum Failure: Error, Equatable {
        /// Too large, not a compact JWS, or claims that are not a strict JSON object.
        case malformed
        /// The header `alg` as written, which is not on the allow-list.
        case unsupportedAlgorithm(String)
    }

    package let jws: JWS
    package let claims: JSONObject
    package let algorithm: JWSAlgorithm

    package init(_ compact: String, maxSize: Int, allowedAlgorithms: Set<JWSAlgorithm>) throws(Failure) {
        do {
            jws = try JWS.parse(compact, maxSize: maxSize)
            claims = try jws.claims()
        } catch {
            throw .malformed
        }
        guard let algorithm = JWSAlgorithm(rawValue: jws.algorithmName), allowedAlgorithms.contains(algorithm) else {
            throw .unsupportedAlgorithm(jws.algorithmName)
        }
        self.algorithm = algorithm
    }
}
