// Test support: Play Integrity response keys made for the test, and tokens minted with them as Google mints them.
import Crypto
import Foundation
import KeywardAttestation
import KeywardJOSE

/// An app's Play Integrity response keys made for the test, as Play Console would give them, and tokens minted
/// with them the way Google mints them: the verdict signed ES256 (through KeywardJOSE's signer), the JWS encrypted
/// A256KW + A256GCM (with swift-crypto). `PlayIntegrityJoserfcTests` mints with joserfc instead.
public struct PlayIntegrityTestKeys: Sendable {
    public let decryptionKey: [UInt8]
    public let signingKey: P256.Signing.PrivateKey

    public init() {
        decryptionKey = Array(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
        signingKey = P256.Signing.PrivateKey()
    }

    /// Standard base64 of the 32 bytes, as Play Console shows the decryption key.
    public var decryptionKeyBase64: String { Data(decryptionKey).base64EncodedString() }
    /// Standard base64 of the SubjectPublicKeyInfo DER, as Play Console shows the verification key.
    public var verificationKeyBase64: String { signingKey.publicKey.derRepresentation.base64EncodedString() }

    public func verifier() throws -> PlayIntegrityVerifier {
        try PlayIntegrityVerifier(decryptionKey: decryptionKeyBase64, verificationKey: verificationKeyBase64)
    }

    /// The JWS Google signs: `{"alg":"ES256"}` over the verdict.
    public func signedVerdict(_ payload: JSONObject) throws -> String {
        let key = try SigningKey(algorithm: .es256, serialized: Array(signingKey.derRepresentation))
        return try JWS.sign(header: [:], claims: payload, key: key)
    }

    public func token(_ payload: JSONObject) throws -> String {
        try Self.encrypt(Array(signedVerdict(payload).utf8), with: decryptionKey)
    }

    /// A compact JWE, A256KW + A256GCM, with a fresh content key and IV.
    public static func encrypt(_ plaintext: [UInt8], with keyEncryptionKey: [UInt8]) throws -> String {
        let header = Base64URL.encode(Array(#"{"alg":"A256KW","enc":"A256GCM"}"#.utf8))
        let contentKey = SymmetricKey(size: .bits256)
        let wrapped = try AES.KeyWrap.wrap(contentKey, using: SymmetricKey(data: keyEncryptionKey))
        let box = try AES.GCM.seal(plaintext, using: contentKey, authenticating: Array(header.utf8))
        return [header, Base64URL.encode(wrapped), Base64URL.encode(box.nonce), Base64URL.encode(box.ciphertext), Base64URL.encode(box.tag)]
            .joined(separator: ".")
    }
}
