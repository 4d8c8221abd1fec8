// Reading an Android attestation chain from PEM, DER, base64 or the registration body, with size limits.
import Foundation
import KeywardJOSE
import SwiftASN1
import X509

/// A Key Attestation certificate chain as a device sends it, leaf first. Built from a PEM file, DER certificates
/// or base64 DER strings (the `{"type":"android-key","chain":[...]}` registration body); each reading refuses a
/// chain that cannot be a real one before any cryptography runs.
public struct AndroidCertificateChain: Sendable {
    /// Real chains have 3 to 5 certificates (leaf, one or two intermediates, the device's copy of the root).
    public static let maximumCertificates = 10
    /// An RSA-4096 certificate is about 1.4 KB, an ML-DSA-87 one about 7.5 KB.
    public static let maximumCertificateSize = 32 * 1024

    public let certificates: [Certificate]

    /// Certificates already parsed (by a caller with its own input form), leaf first.
    public init(certificates: [Certificate]) throws(AttestationFailure) {
        guard !certificates.isEmpty else { throw AttestationFailure(.malformed, "the certificate chain is empty") }
        guard certificates.count <= Self.maximumCertificates else {
            throw AttestationFailure(.malformed, "the chain has \(certificates.count) certificates, more than \(Self.maximumCertificates)")
        }
        self.certificates = certificates
    }

    /// DER certificates, leaf first.
    public init(der items: [[UInt8]]) throws(AttestationFailure) {
        guard items.count <= Self.maximumCertificates else {
            throw AttestationFailure(.malformed, "the chain has \(items.count) certificates, more than \(Self.maximumCertificates)")
        }
        var certificates: [Certificate] = []
        for (index, der) in items.enumerated() {
            certificates.append(try Self.certificate(der, position: index + 1))
        }
        try self.init(certificates: certificates)
    }

    /// Base64 DER certificates, leaf first. Standard or URL-safe alphabet, padding optional, line breaks ignored:
    /// Android apps encode with `Base64.DEFAULT` (lines of 76), `NO_WRAP` or `URL_SAFE`.
    public init(base64 items: [String]) throws(AttestationFailure) {
        guard items.count <= Self.maximumCertificates else {
            throw AttestationFailure(.malformed, "the chain has \(items.count) certificates, more than \(Self.maximumCertificates)")
        }
        var der: [[UInt8]] = []
        for (index, text) in items.enumerated() {
            guard let bytes = Self.base64Decoded(text) else {
                throw AttestationFailure(.malformed, "certificate \(index + 1) of the chain is not base64")
            }
            der.append(bytes)
        }
        try self.init(der: der)
    }

    /// A PEM text of CERTIFICATE blocks, leaf first (the form `keyward attestation verify` reads from a file).
    public init(pem: String) throws(AttestationFailure) {
        guard pem.utf8.count <= Self.maximumCertificates * Self.maximumCertificateSize * 2 else {
            throw AttestationFailure(.malformed, "the PEM text is larger than a chain of \(Self.maximumCertificates) certificates")
        }
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: pem)
        } catch {
            throw AttestationFailure(.malformed, "the PEM text does not parse: \(error)")
        }
        var der: [[UInt8]] = []
        for document in documents {
            guard document.discriminator == "CERTIFICATE" else {
                throw AttestationFailure(.malformed, "the PEM text holds a \(document.discriminator) block, not only certificates")
            }
            der.append(Array(document.derBytes))
        }
        try self.init(der: der)
    }

    /// The registration body's attestation member: `{"type":"android-key","chain":["<base64 DER>", ...]}`.
    public init(wireJSON bytes: some Collection<UInt8>) throws(AttestationFailure) {
        let object: JSONObject
        do {
            object = try StrictJSON.parseObject(bytes)
        } catch {
            throw AttestationFailure(.malformed, "the attestation is not a JSON object: \(error.message)")
        }
        try self.init(wire: object)
    }

    /// The same, from a JSON object already parsed (the device API parses the whole request body once).
    public init(wire object: JSONObject) throws(AttestationFailure) {
        guard object.string("type") == "android-key" else {
            throw AttestationFailure(.malformed, "the attestation's \"type\" is not \"android-key\"")
        }
        guard let items = object.array("chain") else {
            throw AttestationFailure(.malformed, "the attestation has no \"chain\" array")
        }
        var texts: [String] = []
        for item in items {
            guard let text = item.stringValue else {
                throw AttestationFailure(.malformed, "an element of \"chain\" is not a string")
            }
            texts.append(text)
        }
        try self.init(base64: texts)
    }

    /// Each certificate as DER, leaf first.
    public var derEncoded: [[UInt8]] {
        certificates.map { certificate in
            var serializer = DER.Serializer()
            // Serializing a certificate that was parsed only copies its bytes back.
            try? serializer.serialize(certificate)
            return serializer.serializedBytes
        }
    }

    private static func certificate(_ der: [UInt8], position: Int) throws(AttestationFailure) -> Certificate {
        guard der.count <= maximumCertificateSize else {
            throw AttestationFailure(.malformed, "certificate \(position) of the chain is \(der.count) bytes, more than \(maximumCertificateSize)")
        }
        let certificate: Certificate
        do {
            certificate = try Certificate(derEncoded: der)
        } catch {
            // swift-certificates refuses algorithms it cannot verify while parsing; tell those apart from damage.
            if let algorithm = CertificateAlgorithms.unsupportedAlgorithm(in: der) {
                throw AttestationFailure(.unsupportedAlgorithm, "certificate \(position) of the chain uses \(algorithm), which this build cannot verify")
            }
            throw AttestationFailure(.malformed, "certificate \(position) of the chain is not a DER certificate: \(error)")
        }
        try CertificateInput.checkWholeByteSignature(der, position: position)
        return certificate
    }

    static func base64Decoded(_ text: String) -> [UInt8]? {
        guard text.utf8.count <= maximumCertificateSize * 2 else { return nil }
        return Base64Variants.decode(text, ignoringLineBreaks: true)
    }
}
