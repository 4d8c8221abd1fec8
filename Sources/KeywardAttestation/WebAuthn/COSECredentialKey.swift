// A passkey's public key: the COSE_Key of its registration read into the JWK KeywardJOSE verifies with.
import Crypto
import KeywardCBOR
import KeywardJOSE

/// The credential public key of a passkey, for the three algorithms Keyward accepts (RFC 9053, RFC 8812):
/// - ES256 (-7): `{1: 2 (EC2), 3: -7, -1: 1 (P-256), -2: x[32], -3: y[32]}`;
/// - EdDSA (-8): `{1: 1 (OKP), 3: -8, -1: 6 (Ed25519), -2: x[32]}`;
/// - RS256 (-257): `{1: 3 (RSA), 3: -257, -1: n, -2: e}`, with the modulus limits of `JWK`.
///
/// The key must name its algorithm (`alg`, label 3): a key without one could be used with any, and WebAuthn
/// requires it (§6.5.1.1). Signatures are verified by KeywardJOSE's `JWK`, so one crypto path serves tokens and
/// passkeys alike.
public struct COSECredentialKey: Sendable, Hashable {
    /// COSE algorithm identifiers (IANA "COSE Algorithms").
    public enum Algorithm: Int64, Sendable, Hashable, CaseIterable, Codable {
        case es256 = -7
        case edDSA = -8
        case rs256 = -257

        var jws: JWSAlgorithm {
            switch self {
            case .es256: .es256
            case .edDSA: .edDSA
            case .rs256: .rs256
            }
        }
    }

    public let algorithm: Algorithm
    public let jwk: JWK

    /// Reads a COSE_Key map; anything but the three forms above is refused as `unsupportedAlgorithm` (a key type,
    /// curve or algorithm of its own) or `malformed` (the right kind of key, badly formed).
    public init(_ key: CBORValue) throws(WebAuthnFailure) {
        guard key.mapEntries != nil else { throw WebAuthnFailure(.malformed, "the credential public key is not a COSE key map") }
        guard let type = key[1]?.integerValue else { throw WebAuthnFailure(.malformed, "the COSE key has no integer kty (1)") }
        guard let algorithmValue = key[3]?.integerValue else { throw WebAuthnFailure(.malformed, "the COSE key has no integer alg (3)") }
        guard let algorithm = Algorithm(rawValue: algorithmValue) else {
            throw WebAuthnFailure(.unsupportedAlgorithm, "COSE algorithm \(algorithmValue) is not accepted: only ES256 (-7), EdDSA (-8) and RS256 (-257) are")
        }
        let material: JWK.Material
        switch (algorithm, type) {
        case (.es256, 2):
            guard key[-1]?.integerValue == 1 else { throw WebAuthnFailure(.unsupportedAlgorithm, "an ES256 COSE key must be on P-256 (crv 1)") }
            guard let x = key[-2]?.bytesValue, let y = key[-3]?.bytesValue, x.count == 32, y.count == 32 else {
                throw WebAuthnFailure(.malformed, "a P-256 COSE key needs x (-2) and y (-3) of 32 bytes each")
            }
            material = .ec(curve: "P-256", x: x, y: y)
        case (.edDSA, 1):
            guard key[-1]?.integerValue == 6 else { throw WebAuthnFailure(.unsupportedAlgorithm, "an EdDSA COSE key must be on Ed25519 (crv 6)") }
            guard let x = key[-2]?.bytesValue, x.count == 32 else { throw WebAuthnFailure(.malformed, "an Ed25519 COSE key needs x (-2) of 32 bytes") }
            material = .okp(curve: "Ed25519", x: x)
        case (.rs256, 3):
            guard let n = key[-1]?.bytesValue, let e = key[-2]?.bytesValue else {
                throw WebAuthnFailure(.malformed, "an RSA COSE key needs n (-1) and e (-2) byte strings")
            }
            material = .rsa(n: n, e: e)
        default:
            throw WebAuthnFailure(.unsupportedAlgorithm, "COSE key type \(type) does not go with algorithm \(algorithmValue)")
        }
        do {
            self.jwk = try JWK(material: material, alg: algorithm.jws)
        } catch {
            throw WebAuthnFailure([.unsupportedKey, .weakKey].contains(error.code) ? .unsupportedAlgorithm : .malformed, "the COSE key is refused: \(error.message)")
        }
        self.algorithm = algorithm
    }

    /// A key that comes from elsewhere (an attestation certificate), to verify with under `algorithm`.
    init(jwk: JWK, algorithm: Algorithm) throws(WebAuthnFailure) {
        guard jwk.isCompatible(with: algorithm.jws) else {
            throw WebAuthnFailure(.attestationInvalid, "the attestation certificate's key does not go with algorithm \(algorithm.rawValue)")
        }
        self.jwk = jwk
        self.algorithm = algorithm
    }

    /// Reads the COSE_Key bytes a relying party stored at registration.
    public init(bytes: [UInt8]) throws(WebAuthnFailure) {
        let value: CBORValue
        do throws(CBORError) {
            value = try CBORReader.decode(bytes, maximumDepth: 2)
        } catch {
            throw WebAuthnFailure(.malformed, "the stored credential public key is not CBOR: \(error)")
        }
        try self.init(value)
    }

    /// Verifies a WebAuthn signature over `data` (authenticatorData ‖ clientDataHash). ES256 signatures come DER
    /// encoded (§6.5.6); they are read strictly and handed to KeywardJOSE as r ‖ s.
    public func verify(signature: [UInt8], over data: [UInt8]) -> Bool {
        var joseSignature = signature
        if algorithm == .es256 {
            guard signature.count <= 72, let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature),
                Array(parsed.derRepresentation) == signature
            else { return false }
            joseSignature = Array(parsed.rawRepresentation)
        }
        return jwk.verify(signature: joseSignature, over: data, algorithm: algorithm.jws)
    }
}
