// Test support: passkey registrations and assertions made in the test, every field adjustable, with ES256, EdDSA
// or RS256 keys and `none`, `packed` (self or with a chain from a self-made CA) or any other attestation.
import Crypto
import Foundation
import KeywardCBOR
import KeywardJOSE
import SwiftASN1
import X509
import _CryptoExtras

/// A passkey made in the test: the bytes a browser and an authenticator would send, built from adjustable parts,
/// so each check of the verifier can be reached with exactly one thing wrong.
public struct ForgedPasskey: Sendable {
    public enum Key: Sendable {
        case es256(P256.Signing.PrivateKey)
        case edDSA(Curve25519.Signing.PrivateKey)
        case rs256(_RSA.Signing.PrivateKey)

        public static func make(_ algorithm: Int) throws -> Key {
            switch algorithm {
            case -8: .edDSA(Curve25519.Signing.PrivateKey())
            case -257: .rs256(try _RSA.Signing.PrivateKey(keySize: .bits2048))
            default: .es256(P256.Signing.PrivateKey())
            }
        }

        public var coseKey: CBORValue {
            switch self {
            case .es256(let key):
                return ForgedAppAttestation.coseKey(key.publicKey)
            case .edDSA(let key):
                return .map([
                    CBORMapEntry(.integer(1), .integer(1)), CBORMapEntry(.integer(3), .integer(-8)), CBORMapEntry(.integer(-1), .integer(6)),
                    CBORMapEntry(.integer(-2), .bytes(Array(key.publicKey.rawRepresentation))),
                ])
            case .rs256(let key):
                let numbers = try! key.publicKey.getKeyPrimitives()
                return .map([
                    CBORMapEntry(.integer(1), .integer(3)), CBORMapEntry(.integer(3), .integer(-257)),
                    CBORMapEntry(.integer(-1), .bytes(Array(numbers.modulus))), CBORMapEntry(.integer(-2), .bytes(Array(numbers.publicExponent))),
                ])
            }
        }

        public var algorithm: Int64 {
            switch self {
            case .es256: -7
            case .edDSA: -8
            case .rs256: -257
            }
        }

        /// A WebAuthn signature: DER for ECDSA (§6.5.6), raw for EdDSA, PKCS#1 v1.5 for RSA.
        public func sign(_ data: [UInt8]) throws -> [UInt8] {
            switch self {
            case .es256(let key): Array(try key.signature(for: data).derRepresentation)
            case .edDSA(let key): Array(try key.signature(for: data))
            case .rs256(let key): Array(try key.signature(for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5).rawRepresentation)
            }
        }
    }

    /// The attestation statement to write.
    public enum Statement: Sendable {
        case none
        /// `packed` signed by the credential key itself.
        case packedSelf
        /// `packed` signed by a certificate the test CA issues (its subject OU "Authenticator Attestation").
        case packedCertified(ForgedPasskeyCA)
        /// `apple`, the leaf certifying SHA-256(authData ‖ clientDataHash) and holding `certifiedKey` (the credential's
        /// own key when nil), issued by the test CA.
        case apple(ForgedPasskeyCA, certifiedKey: P256.Signing.PublicKey? = nil, nonce: [UInt8]? = nil)
        /// Any format and statement, as given.
        case custom(format: String, statement: CBORValue)
    }

    public var key: Key
    public var credentialID: [UInt8] = Array(SecureRandom.bytes(32))
    public var rpID = "keyward.test"
    public var origin = "https://keyward.test"
    public var aaguid = [UInt8](repeating: 0, count: 16)
    public var flags: UInt8 = 0x45  // UP | UV | AT
    public var signCount: UInt32 = 0
    public var crossOrigin: Bool?
    /// The COSE key written into authData; the key's own when nil.
    public var coseKey: CBORValue?

    public init(algorithm: Int = -7) throws {
        key = try Key.make(algorithm)
    }

    public func clientDataJSON(type: String, challenge: [UInt8]) -> [UInt8] {
        var object: JSONObject = ["type": .string(type), "challenge": .string(Base64URL.encode(challenge)), "origin": .string(origin)]
        if let crossOrigin { object["crossOrigin"] = .bool(crossOrigin) }
        return StrictJSON.serialize(object)
    }

    public func registrationAuthenticatorData() -> [UInt8] {
        var bytes = Array(SHA256.hash(data: Array(rpID.utf8))) + [flags] + withUnsafeBytes(of: signCount.bigEndian, Array.init)
        bytes += aaguid + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID
        bytes += (coseKey ?? key.coseKey).encoded
        return bytes
    }

    /// A registration: (clientDataJSON, attestationObject).
    public func registration(challenge: [UInt8], statement: Statement = .none, type: String = "webauthn.create") throws -> (clientData: [UInt8], attestationObject: [UInt8]) {
        let clientData = clientDataJSON(type: type, challenge: challenge)
        let authData = registrationAuthenticatorData()
        let signed = authData + Array(SHA256.hash(data: clientData))
        let format: String, attStmt: CBORValue
        switch statement {
        case .none:
            (format, attStmt) = ("none", .map([]))
        case .packedSelf:
            (format, attStmt) = ("packed", .map([CBORMapEntry(.text("alg"), .integer(key.algorithm)), CBORMapEntry(.text("sig"), .bytes(try key.sign(signed)))]))
        case .packedCertified(let ca):
            let (leafKey, leaf) = try ca.issueAttestationCertificate(aaguid: aaguid)
            attStmt = .map([
                CBORMapEntry(.text("alg"), .integer(-7)), CBORMapEntry(.text("sig"), .bytes(Array(try leafKey.signature(for: signed).derRepresentation))),
                CBORMapEntry(.text("x5c"), .array([.bytes(leaf), .bytes(try ForgedAppAttestation.der(ca.certificate))])),
            ])
            format = "packed"
        case .apple(let ca, let certifiedKey, let nonce):
            guard case .es256(let own) = key else { throw ForgedPasskeyError("an apple statement needs an ES256 credential") }
            let leaf = try ca.issueAppleCertificate(key: certifiedKey ?? own.publicKey, nonce: nonce ?? Array(SHA256.hash(data: signed)))
            attStmt = .map([CBORMapEntry(.text("x5c"), .array([.bytes(leaf), .bytes(try ForgedAppAttestation.der(ca.certificate))]))])
            format = "apple"
        case .custom(let name, let value):
            (format, attStmt) = (name, value)
        }
        let object = CBORValue.map([
            CBORMapEntry(.text("fmt"), .text(format)), CBORMapEntry(.text("attStmt"), attStmt), CBORMapEntry(.text("authData"), .bytes(authData)),
        ])
        return (clientData, object.encoded)
    }

    /// An assertion: (clientDataJSON, authenticatorData, signature), with `flags` minus AT and `signCount`.
    public func assertion(challenge: [UInt8], type: String = "webauthn.get") throws -> (clientData: [UInt8], authenticatorData: [UInt8], signature: [UInt8]) {
        let clientData = clientDataJSON(type: type, challenge: challenge)
        let authData = Array(SHA256.hash(data: Array(rpID.utf8))) + [flags & ~0x40] + withUnsafeBytes(of: signCount.bigEndian, Array.init)
        return (clientData, authData, try key.sign(authData + Array(SHA256.hash(data: clientData))))
    }
}

public struct ForgedPasskeyError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// A self-made CA standing in for an authenticator maker's attestation root.
public struct ForgedPasskeyCA: Sendable {
    public let key = P256.Signing.PrivateKey()
    public let certificate: Certificate
    public let time: Date
    /// Written into the attestation certificate's subject OU; §8.2.1 wants "Authenticator Attestation".
    public var organizationalUnit = "Authenticator Attestation"

    public init(time: Date) throws {
        self.time = time
        let name = try DistinguishedName { CommonName("Forged Authenticator Maker Root") }
        certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: time - 86_400, notValidAfter: time + 86_400,
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(key)
        )
    }

    /// A packed attestation certificate naming `aaguid` in its id-fido-gen-ce-aaguid extension; its DER.
    func issueAttestationCertificate(aaguid: [UInt8]) throws -> (P256.Signing.PrivateKey, [UInt8]) {
        let leafKey = P256.Signing.PrivateKey()
        var aaguidValue = DER.Serializer()
        try aaguidValue.serialize(ASN1OctetString(contentBytes: aaguid[...]))
        let unit = organizationalUnit
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: time - 3_600, notValidAfter: time + 3_600,
            issuer: certificate.subject,
            subject: try DistinguishedName {
                CountryName("SE")
                OrganizationName("Forged Authenticators")
                OrganizationalUnitName(unit)
                CommonName("Forged Authenticator")
            },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                BasicConstraints.notCertificateAuthority
                Certificate.Extension(oid: [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4], critical: false, value: aaguidValue.serializedBytes[...])
            },
            issuerPrivateKey: .init(key)
        )
        return (leafKey, try ForgedAppAttestation.der(leaf))
    }

    /// An `apple` credential certificate: `key`, and `nonce` in Apple's extension 1.2.840.113635.100.8.2.
    func issueAppleCertificate(key certified: P256.Signing.PublicKey, nonce: [UInt8]) throws -> [UInt8] {
        var value = DER.Serializer()
        try value.appendConstructedNode(identifier: .sequence) { sequence in
            try sequence.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)) { tagged in
                try tagged.serialize(ASN1OctetString(contentBytes: nonce[...]))
            }
        }
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(certified), notValidBefore: time - 3_600, notValidAfter: time + 3_600,
            issuer: certificate.subject, subject: try DistinguishedName { CommonName("Forged Apple Passkey") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Certificate.Extension(oid: [1, 2, 840, 113635, 100, 8, 2], critical: false, value: value.serializedBytes[...])
            },
            issuerPrivateKey: .init(key)
        )
        return try ForgedAppAttestation.der(leaf)
    }
}
