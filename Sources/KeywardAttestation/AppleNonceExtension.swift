// Reading the nonce Apple certifies in an App Attest credential certificate and in an `apple` WebAuthn attestation.
import SwiftASN1
import X509

/// The nonce Apple certifies in a credential certificate (App Attest, and WebAuthn's `apple` format): extension
/// 1.2.840.113635.100.8.2, whose value is DER `SEQUENCE { [1] EXPLICIT OCTET STRING }` holding
/// SHA-256(authData ‖ clientDataHash).
enum AppleNonceExtension {
    static let oid: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 8, 2]

    /// The certified nonce; refused as a nonce mismatch when the extension is missing or unreadable, since then
    /// the certificate certifies no nonce at all.
    static func nonce(in certificate: Certificate) throws(AttestationFailure) -> [UInt8] {
        guard let found = certificate.extensions[oid: oid] else {
            throw AttestationFailure(.nonceMismatch, "the credential certificate has no nonce extension (1.2.840.113635.100.8.2)")
        }
        do {
            let node = try DER.parse(found.value)
            let octets = try DER.sequence(node, identifier: .sequence) { nodes in
                try DER.explicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { tagged in
                    try ASN1OctetString(derEncoded: tagged)
                }
            }
            return Array(octets.bytes)
        } catch {
            throw AttestationFailure(.nonceMismatch, "the credential certificate's nonce extension is not SEQUENCE { [1] OCTET STRING }")
        }
    }
}
