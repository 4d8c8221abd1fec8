// Decoding classic Play Integrity tokens locally with the app's response keys from Play Console.
import Foundation
import KeywardJOSE

/// Decodes classic-request tokens with the app's response keys from Play Console: the JWE (A256KW + A256GCM) is
/// decrypted with the decryption key, and the JWS inside it (ES256) must verify with the verification key. Both
/// through KeywardJOSE, the only JOSE reader.
public struct PlayIntegrityLocalDecoder: PlayIntegrityDecoder {
    public var source: PlayIntegritySource { .local }

    let decryptionKey: [UInt8]
    let verificationKey: JWK

    /// The keys as Play Console gives them: the decryption key as base64 of 32 bytes, the verification key as
    /// base64 of an EC P-256 SubjectPublicKeyInfo (DER). Either base64 alphabet, padded or not; surrounding
    /// whitespace is ignored. A key that does not read is `MALFORMED`, with the key named.
    public init(decryptionKey: String, verificationKey: String) throws(AttestationFailure) {
        let decryption = decryptionKey.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let decryptionBytes = Base64Variants.decode(decryption), decryptionBytes.count == JWE.keyEncryptionKeySize else {
            throw AttestationFailure(.malformed, "the Play Integrity decryption key is not base64 of \(JWE.keyEncryptionKeySize) bytes")
        }
        let verification = verificationKey.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let spki = Base64Variants.decode(verification) else {
            throw AttestationFailure(.malformed, "the Play Integrity verification key is not base64")
        }
        let key: JWK
        do {
            key = try JWK(subjectPublicKeyInfo: spki)
        } catch {
            throw AttestationFailure(.malformed, "the Play Integrity verification key is not a public key: \(error.message)")
        }
        try self.init(decryptionKey: decryptionBytes, verificationKey: key)
    }

    /// The keys as bytes and as a JWK (which must be EC P-256, the key of ES256).
    public init(decryptionKey: [UInt8], verificationKey: JWK) throws(AttestationFailure) {
        guard decryptionKey.count == JWE.keyEncryptionKeySize else {
            throw AttestationFailure(.malformed, "the Play Integrity decryption key has \(decryptionKey.count) bytes, not \(JWE.keyEncryptionKeySize)")
        }
        guard verificationKey.isCompatible(with: .es256) else {
            throw AttestationFailure(.malformed, "the Play Integrity verification key is not an EC P-256 key")
        }
        self.decryptionKey = decryptionKey
        self.verificationKey = verificationKey
    }

    public func decode(_ token: String, at time: Date) throws(AttestationFailure) -> JSONObject {
        try PlayIntegrityToken.checkShape(token)
        let jwe: JWE
        do {
            jwe = try JWE.decrypt(token, keyEncryptionKey: decryptionKey)
        } catch {
            throw Self.failure(decrypting: error)
        }
        guard let inner = String(validating: jwe.plaintext, as: UTF8.self) else {
            throw AttestationFailure(.malformed, "the decrypted token is not text")
        }
        let jws: JWS
        do {
            jws = try JWS.parse(inner, maxSize: PlayIntegrityToken.maxSize)
        } catch {
            throw AttestationFailure(.malformed, "the decrypted token is not a compact JWS: \(error)")
        }
        // The signature before the payload is read: nothing unauthenticated is parsed further.
        guard jws.algorithmName == JWSAlgorithm.es256.rawValue else {
            throw AttestationFailure(.signatureInvalid, "the inner JWS is signed with \(jws.algorithmName.prefix(32)), not ES256")
        }
        guard verificationKey.verify(signature: jws.signature, over: jws.signingInput, algorithm: .es256) else {
            throw AttestationFailure(.signatureInvalid, "the inner JWS does not verify with the verification key")
        }
        do {
            return try jws.claims()
        } catch {
            throw AttestationFailure(.malformed, "the verdict is not a JSON object: \(error)")
        }
    }

    /// A token that is not a JWE at all is `MALFORMED`; one that is, but not for this key or this algorithm pair,
    /// or altered, is `UNDECRYPTABLE`.
    static func failure(decrypting error: JOSEError) -> AttestationFailure {
        switch error.code {
        case .keyUnwrapFailed, .decryptionFailed, .algorithmNotAllowed, .missingAlgorithm, .encryptionNotAllowed,
            .missingEncryption, .unsupportedCompression, .unsupportedCritical:
            AttestationFailure(.undecryptable, "the token cannot be decrypted with the decryption key: \(error)")
        default:
            AttestationFailure(.malformed, "the token is not a compact JWE: \(error)")
        }
    }
}
