// A certificate's public key as the JWK KeywardJOSE verifies with.
import KeywardJOSE
import SwiftASN1
import X509

extension Certificate.PublicKey {
    /// The key as a JWK, read from its DER SubjectPublicKeyInfo. (`subjectPublicKeyInfoBytes` is only the BIT
    /// STRING's content — the bare point of an EC key — so it cannot be read back without the algorithm around it.)
    public func jwk() throws(JOSEError) -> JWK {
        var serializer = DER.Serializer()
        do {
            try serializer.serialize(self)
        } catch {
            throw JOSEError(.invalidKey, "the certificate's public key does not serialize as SubjectPublicKeyInfo")
        }
        return try JWK(subjectPublicKeyInfo: serializer.serializedBytes)
    }
}
