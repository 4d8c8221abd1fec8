/// Anything that can sign a JWS: a software `SigningKey`, or a key that never leaves hardware (Secure Enclave,
/// Android Keystore) and so cannot be a `SigningKey`. Signing is the only thing JOSE needs from the private half.
public protocol JWSSigner: Sendable {
    /// What a failed signature throws. `SigningKey` throws `JOSEError`, so the server's `throws(JOSEError)` code
    /// keeps its typed errors; a hardware key reports its platform's errors unchanged instead of having them
    /// squeezed into a JOSE code.
    associatedtype SigningError: Error = any Error

    /// The one algorithm this key signs with; it becomes the header's `alg`.
    var algorithm: JWSAlgorithm { get }

    /// The public half as a JWK with `alg` set and no kid.
    var publicJWK: JWK { get }

    /// Signs in JOSE format: raw r||s for ECDSA (not DER), the plain signature otherwise.
    func sign(_ signingInput: [UInt8]) throws(SigningError) -> [UInt8]
}

extension SigningKey: JWSSigner {}
