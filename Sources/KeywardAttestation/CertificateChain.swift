// Verifying a device's certificate chain against roots compiled into Keyward, never roots it sends.
import Foundation
import SwiftASN1
// The SPI switches off only RFC5280Policy's validity check, which has no room for a leaf's clock leeway;
// DeviceCertificateValidity judges the dates instead, and the policy keeps its version and constraint checks.
@_spi(DisableValidityCheck) import X509

/// Verifies a certificate chain sent by a device against roots compiled into Keyward. A root that arrives with
/// the chain is never trusted: the device's own chain is only a source of intermediates, so a self-made root
/// inside it simply fails to connect to a pinned one.
public struct PinnedRoots: Sendable {
    public let certificates: [Certificate]

    public init(_ certificates: [Certificate]) {
        self.certificates = certificates
    }

    /// Reads every CERTIFICATE block of `pem` (operators may add a root, e.g. Google's 2016 RSA certificate for
    /// chains made before its 2022 re-issue).
    public init(pem: String) throws(AttestationFailure) {
        do {
            let documents = try PEMDocument.parseMultiple(pemString: pem)
            guard !documents.isEmpty else { throw AttestationFailure(.malformed, "no PEM certificate found") }
            self.certificates = try documents.map { try Certificate(pemDocument: $0) }
        } catch let failure as AttestationFailure {
            throw failure
        } catch {
            throw AttestationFailure(.malformed, "root certificates could not be read: \(error)")
        }
    }

    public func adding(_ other: PinnedRoots) -> PinnedRoots {
        PinnedRoots(certificates + other.certificates)
    }

    /// How far ahead of the server a device clock may be when it dates a key's certificate: the default of the
    /// attestation verifiers' `leafNotBeforeLeeway`.
    public static let defaultLeafNotBeforeLeeway: TimeInterval = 5 * 60

    /// Checks that `chain` (leaf first, each certificate issued by the next; a trailing root is ignored) leads to one
    /// of these roots, with every signature and validity period holding at `time`. Returns the leaf.
    ///
    /// - Parameter leafNotBeforeLeeway: seconds the leaf's notBefore may lie after `time` (a device clock ahead of
    ///   the server's); never applied to expiry nor to the certificates above the leaf. Negative counts as 0.
    public func verify(chain: [Certificate], at time: Date, leafNotBeforeLeeway: TimeInterval = 0) async throws(AttestationFailure) -> Certificate {
        guard let leaf = chain.first else { throw AttestationFailure(.malformed, "the certificate chain is empty") }
        try Self.checkOrder(chain)
        var verifier = Verifier(rootCertificates: CertificateStore(certificates)) {
            RFC5280Policy.withValidityCheckDisabled()
            DeviceCertificateValidity(time: time, leafNotBeforeLeeway: leafNotBeforeLeeway)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(chain.dropFirst()))
        switch result {
        case .validCertificate:
            return leaf
        case .couldNotValidate(let failures):
            let when = time.formatted(.iso8601)
            guard !failures.isEmpty else {
                throw AttestationFailure(.chainInvalid, "no path from the leaf to a pinned root at \(when) (an unknown issuer or a bad signature)")
            }
            let reasons = failures.map { String(describing: $0.policyFailureReason) }
            throw AttestationFailure(.chainInvalid, "the chain does not verify to a pinned root at \(when): \(reasons.joined(separator: "; "))")
        }
    }
}

extension PinnedRoots {
    /// Devices send their chain in order, leaf first, each certificate issued by the next. Checked before any
    /// signature, so the path builder has exactly one candidate issuer per step: certificates sharing a subject
    /// could otherwise each vouch for the others, and searching every ordering of a few of them costs minutes of
    /// CPU for one unauthenticated request (security review C1).
    static func checkOrder(_ chain: [Certificate]) throws(AttestationFailure) {
        var subjects: Set<DistinguishedName> = []
        for (index, certificate) in chain.enumerated() {
            guard subjects.insert(certificate.subject).inserted else {
                throw AttestationFailure(.malformed, "certificate \(index + 1) of the chain repeats the subject of an earlier one")
            }
            if index + 1 < chain.count, certificate.issuer != chain[index + 1].subject {
                throw AttestationFailure(.malformed, "certificate \(index + 1) of the chain is not issued by certificate \(index + 2): send the chain leaf first, in order")
            }
        }
    }
}

/// DER or PEM certificates as a device or an operator hands them over.
public enum CertificateInput {
    /// Parses base64 DER certificates (`x5c`, Android `chain`), naming the one that fails.
    public static func certificates(derEncoded items: [[UInt8]]) throws(AttestationFailure) -> [Certificate] {
        var certificates: [Certificate] = []
        for (index, der) in items.enumerated() {
            do {
                certificates.append(try Certificate(derEncoded: der))
            } catch {
                throw AttestationFailure(.malformed, "certificate \(index + 1) of the chain is not a DER certificate")
            }
            try checkWholeByteSignature(der, position: index + 1)
        }
        return certificates
    }

    /// A certificate's signature value is whole bytes: its BIT STRING counts no unused bits. swift-certificates
    /// verifies the bytes whatever that count says, so without this one signed certificate would have eight
    /// encodings that all verify, and a chain could be told apart from the one the device sent (found by the
    /// app-attest fuzzer).
    static func checkWholeByteSignature(_ der: [UInt8], position: Int) throws(AttestationFailure) {
        let wholeBytes: Bool
        do {
            let node = try DER.parse(der)
            guard case .constructed(let children) = node.content else { throw ASN1Error.invalidASN1Object(reason: "not a SEQUENCE") }
            let elements = Array(children)
            guard elements.count == 3 else { throw ASN1Error.invalidASN1Object(reason: "not three elements") }
            wholeBytes = try ASN1BitString(derEncoded: elements[2]).paddingBits == 0
        } catch {
            throw AttestationFailure(.malformed, "certificate \(position) of the chain is not a DER certificate")
        }
        guard wholeBytes else {
            throw AttestationFailure(.malformed, "certificate \(position) of the chain has a signature that is not whole bytes")
        }
    }
}
