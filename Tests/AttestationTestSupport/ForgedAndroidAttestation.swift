// Test support: an Android Key Attestation chain under a self-made root, carrying the test's challenge.
import Crypto
import Foundation
import SwiftASN1
import X509

/// An Android Key Attestation chain made in the test: a self-made root certifies the registered key with a real
/// device's KeyDescription whose attestation challenge is replaced by the test's. Pinning the root lets a test
/// register a key under this server's challenge, which no real chain can carry.
public struct ForgedAndroidAttestation: Sendable {
    public static let keyDescriptionOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]
    public let rootKey = P256.Signing.PrivateKey()
    public let root: Certificate

    /// A root valid a day either side of `time`, or from `rootNotBefore` when given.
    public init(time: Date, rootNotBefore: Date? = nil) throws {
        let name = try DistinguishedName { CommonName("Forged Key Attestation Root") }
        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
            notValidBefore: rootNotBefore ?? time - 86_400, notValidAfter: time + 86_400, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)) },
            issuerPrivateKey: .init(rootKey)
        )
    }

    /// `keyDescription` (DER) with its attestationChallenge (the fifth field) replaced.
    public static func replacingChallenge(of keyDescription: [UInt8], with challenge: [UInt8]) throws -> [UInt8] {
        guard case .constructed(let nodes) = try DER.parse(keyDescription).content else { throw ASN1Error.invalidASN1Object(reason: "not a SEQUENCE") }
        var fields = nodes.map { Array($0.encodedBytes) }
        var octets = DER.Serializer()
        try octets.serialize(ASN1OctetString(contentBytes: challenge[...]))
        fields[4] = octets.serializedBytes
        var sequence = DER.Serializer()
        sequence.appendConstructedNode(identifier: .sequence) { $0.serializeRawBytes(fields.flatMap { $0 }) }
        return sequence.serializedBytes
    }

    /// The chain [leaf, root] certifying `key` with `keyDescription`, DER, leaf first. The leaf is valid an hour
    /// either side of `time` unless `leafNotBefore` or `leafNotAfter` say otherwise.
    public func chain(
        certifying key: P256.Signing.PublicKey, keyDescription: [UInt8], time: Date, leafNotBefore: Date? = nil, leafNotAfter: Date? = nil
    ) throws -> [[UInt8]] {
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key),
            notValidBefore: leafNotBefore ?? time - 3_600, notValidAfter: leafNotAfter ?? time + 3_600, issuer: root.subject,
            subject: try DistinguishedName { CommonName("Android Keystore Key") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Certificate.Extension(oid: Self.keyDescriptionOID, critical: false, value: keyDescription[...])
            },
            issuerPrivateKey: .init(rootKey)
        )
        return [try Self.der(leaf), try Self.der(root)]
    }

    /// The KeyDescription extension value of a certificate.
    public static func keyDescription(of certificate: Certificate) -> [UInt8]? {
        certificate.extensions.first { $0.oid == keyDescriptionOID }.map { Array($0.value) }
    }

    static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
