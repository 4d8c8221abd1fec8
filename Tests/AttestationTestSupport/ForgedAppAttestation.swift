// Test support: App Attest attestations and assertions certified by a self-made CA, every field adjustable.
import Crypto
import Foundation
import KeywardCBOR
import SwiftASN1
import X509

/// An App Attest attestation made in the test: a self-made P-256 CA certifies a credential key with a correct nonce
/// extension, so the object is right in every respect but its root. Pinning the CA lets the tests reach every check
/// with objects the real vectors cannot provide (a trailing map, a wrong counter...); pinning Apple's root shows
/// that a root sent inside x5c is never trusted.
public struct ForgedAppAttestation: Sendable {
    public let time: Date
    public let caKey = P256.Signing.PrivateKey()
    public let ca: Certificate
    /// Replaceable, so that one CA certifies several App Attest keys (an installation attesting a key per attempt).
    public var credentialKey = P256.Signing.PrivateKey()

    public var appID = "6MURL8TA57.de.vincent-haupert.apple-appattest-poc"
    public var aaguid = Array("appattestdevelop".utf8)
    public var counter: UInt32 = 0
    public var clientDataHash = Array(SHA256.hash(data: Array("forged challenge".utf8)))
    /// The credential id written into authData; the key id when nil.
    public var credentialID: [UInt8]?
    /// The COSE key written into authData; the credential key's when nil.
    public var coseKey: CBORValue?
    /// A map after the COSE key, as newer devices write one.
    public var trailer: CBORValue?
    /// Whether the credential certificate carries the nonce extension at all.
    public var certifiesNonce = true
    /// The credential certificate's notBefore; an hour before `time` when nil. It stays valid an hour after `time`.
    public var credentialNotBefore: Date?

    public init(time: Date) throws {
        self.time = time
        let name = try DistinguishedName { CommonName("Forged App Attestation Root CA") }
        ca = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey),
            notValidBefore: time - 86_400, notValidAfter: time + 86_400, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(caKey)
        )
    }

    public var keyID: [UInt8] { Array(SHA256.hash(data: credentialKey.publicKey.x963Representation)) }

    public static func coseKey(_ key: P256.Signing.PublicKey) -> CBORValue {
        let point = Array(key.x963Representation)
        return .map([
            CBORMapEntry(.integer(1), .integer(2)), CBORMapEntry(.integer(3), .integer(-7)), CBORMapEntry(.integer(-1), .integer(1)),
            CBORMapEntry(.integer(-2), .bytes(Array(point[1..<33]))), CBORMapEntry(.integer(-3), .bytes(Array(point[33..<65]))),
        ])
    }

    public var authData: [UInt8] {
        let credential = credentialID ?? keyID
        var bytes = Array(SHA256.hash(data: Array(appID.utf8))) + [0x40]
        bytes += withUnsafeBytes(of: counter.bigEndian, Array.init)
        bytes += aaguid + [UInt8(credential.count >> 8), UInt8(credential.count & 0xFF)] + credential
        bytes += (coseKey ?? Self.coseKey(credentialKey.publicKey)).encoded
        if let trailer { bytes += trailer.encoded }
        return bytes
    }

    /// The attestation object, x5c = [credential certificate, the forged CA].
    public func object() throws -> [UInt8] {
        let authData = authData
        let nonce = Array(SHA256.hash(data: authData + clientDataHash))
        var value = DER.Serializer()
        try value.appendConstructedNode(identifier: .sequence) { sequence in
            try sequence.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)) { tagged in
                try tagged.serialize(ASN1OctetString(contentBytes: nonce[...]))
            }
        }
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(credentialKey.publicKey),
            notValidBefore: credentialNotBefore ?? time - 3_600, notValidAfter: time + 3_600, issuer: ca.subject,
            subject: try DistinguishedName { CommonName(keyID.map { String(format: "%02x", $0) }.joined()) },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                if certifiesNonce {
                    Certificate.Extension(oid: [1, 2, 840, 113635, 100, 8, 2], critical: false, value: value.serializedBytes[...])
                }
            },
            issuerPrivateKey: .init(caKey)
        )
        let statement = CBORValue.map([
            CBORMapEntry(.text("x5c"), .array([.bytes(try Self.der(leaf)), .bytes(try Self.der(ca))])),
            CBORMapEntry(.text("receipt"), .bytes(Array("not a real receipt".utf8))),
        ])
        return CBORValue.map([
            CBORMapEntry(.text("fmt"), .text("apple-appattest")), CBORMapEntry(.text("attStmt"), statement),
            CBORMapEntry(.text("authData"), .bytes(authData)),
        ]).encoded
    }

    public static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// An assertion by the credential key (`generateAssertion`): authenticatorData = rpIdHash ‖ flags ‖ counter ‖
    /// `trailer`, signed as Apple's devices sign it (SHA-256 of the nonce, the nonce passed as a message).
    public func assertion(counter: UInt32, clientData: [UInt8], trailer: [UInt8] = []) throws -> [UInt8] {
        try Self.assertion(key: credentialKey, appID: appID, counter: counter, clientData: clientData, trailer: trailer)
    }

    public static func assertion(key: P256.Signing.PrivateKey, appID: String, counter: UInt32, clientData: [UInt8], trailer: [UInt8] = []) throws -> [UInt8] {
        try assertion(key: key, appID: appID, counter: counter, clientDataHash: Array(SHA256.hash(data: clientData)), trailer: trailer)
    }

    /// The same from the client data's SHA-256, as `generateAssertion(_:clientDataHash:)` receives it.
    public static func assertion(key: P256.Signing.PrivateKey, appID: String, counter: UInt32, clientDataHash: [UInt8], trailer: [UInt8] = []) throws -> [UInt8] {
        let authenticatorData = Array(SHA256.hash(data: Array(appID.utf8))) + [0x40] + withUnsafeBytes(of: counter.bigEndian, Array.init) + trailer
        let nonce = Data(SHA256.hash(data: authenticatorData + clientDataHash))
        let signature = try key.signature(for: nonce)
        return CBORValue.map([
            CBORMapEntry(.text("signature"), .bytes(Array(signature.derRepresentation))),
            CBORMapEntry(.text("authenticatorData"), .bytes(authenticatorData)),
        ]).encoded
    }
}
