import KeywardJOSE

/// A JWS a device sent (enrollment JWT, login JWT, DPoP proof), parsed but not yet verified: the signature is
/// checked later with the key that applies. Only RS*/ES* algorithms are accepted (reference §3.7).
struct DeviceJWT {
    let jws: JWS
    let claims: JSONObject
    let algorithm: JWSAlgorithm

    /// `name` is the original's word for the token in its messages: "enrollment token", "authentication token",
    /// "DPoP proof" → "Invalid <name>", "Unsupported <name> algorithm: X".
    init(_ compact: String, name: String) throws(PushMFAError) {
        do {
            jws = try JWS.parse(compact, maxSize: PushMFALimits.jwtLength)
            claims = try jws.claims()
        } catch {
            throw PushMFAError.badRequest("Invalid \(name)")
        }
        guard let algorithm = JWSAlgorithm(rawValue: jws.algorithmName), DeviceAuthenticator.algorithms.contains(algorithm) else {
            throw PushMFAError.badRequest("Unsupported \(name) algorithm: \(jws.algorithmName.prefix(16))")
        }
        self.algorithm = algorithm
    }
}
