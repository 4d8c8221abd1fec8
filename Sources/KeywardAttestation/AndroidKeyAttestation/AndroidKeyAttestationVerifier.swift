// Verifying an Android Key Attestation chain: pinned root, revocation list, then the policy's checks.
import Foundation
import SwiftASN1
import X509

/// Verifies an Android Key Attestation chain (reference §3.2): the chain to a pinned root at the given time, the
/// revocation list, then the KeyDescription under a policy. Pure: the same inputs and time give the same verdict.
/// A refusal carries the reason of the first check that failed, in this order: chain, revocation, KeyDescription,
/// challenge, security level, verified boot, key properties, app identity, registered key.
public struct AndroidKeyAttestationVerifier: Sendable {
    /// Google's hardware attestation roots unless the operator adds some (e.g. the original 2016 RSA certificate,
    /// for chains made before its 2022 re-issue). A root inside the device's chain is never an anchor.
    public var roots: PinnedRoots
    /// The operator's copy of Google's status list; nil when none is configured (reported as not checked).
    public var revocationList: RevocationList?
    /// Seconds the leaf's notBefore may lie after the verification time: the Keystore dates the leaf with the
    /// device's clock, which may run ahead of the server's. Expiry and the CA certificates' dates have no leeway.
    public var leafNotBeforeLeeway: TimeInterval

    public init(
        roots: PinnedRoots = .googleHardwareAttestation, revocationList: RevocationList? = nil,
        leafNotBeforeLeeway: TimeInterval = PinnedRoots.defaultLeafNotBeforeLeeway
    ) {
        self.roots = roots
        self.revocationList = revocationList
        self.leafNotBeforeLeeway = leafNotBeforeLeeway
    }

    public func verify(
        _ chain: AndroidCertificateChain, policy: AndroidAttestationPolicy, at time: Date
    ) async throws(AttestationFailure) -> AndroidKeyAttestationResult {
        let certificates = chain.certificates
        _ = try await roots.verify(chain: certificates, at: time, leafNotBeforeLeeway: leafNotBeforeLeeway)
        var checks = [AttestationCheck("chain", .passed, "\(certificates.count) certificates to a pinned root at \(time.formatted(.iso8601))")]

        checks.append(try checkRevocation(certificates))

        guard let (position, keyDescription) = try Self.keyDescription(in: certificates) else {
            throw AttestationFailure(.malformed, "no certificate of the chain carries the KeyDescription extension (1.3.6.1.4.1.11129.2.1.17)")
        }
        checks.append(AttestationCheck("keyDescription", .passed, "attestation version \(keyDescription.attestationVersion), in certificate \(position + 1)"))

        let leafKey = Self.subjectPublicKeyInfo(of: certificates[0])
        let evidence = AndroidAttestationEvidence(
            keyDescription: keyDescription, keyDescriptionCertificate: position, leafSubjectPublicKeyInfo: leafKey
        )
        for rule in policy.rules {
            checks.append(try rule.check(evidence))
        }
        return AndroidKeyAttestationResult(
            keyDescription: keyDescription, keyDescriptionCertificate: position, leafSubjectPublicKeyInfo: leafKey,
            certificateSerials: certificates.map { HexSerial.text($0.serialNumber.bytes) }, verifiedAt: time, checks: checks
        )
    }

    private func checkRevocation(_ certificates: [Certificate]) throws(AttestationFailure) -> AttestationCheck {
        guard let revocationList else {
            return AttestationCheck("revocation", .notChecked, "no revocation list configured")
        }
        for (index, certificate) in certificates.enumerated() {
            if let entry = revocationList.entry(for: certificate) {
                let serial = HexSerial.text(certificate.serialNumber.bytes)
                throw AttestationFailure(.revoked, "certificate \(index + 1) (serial \(serial)) is listed as \(entry.status ?? "revoked")\(entry.reason.map { " (\($0))" } ?? "")")
            }
        }
        return AttestationCheck("revocation", .passed, "no certificate among \(revocationList.entries.count) listed")
    }

    /// The KeyDescription of the first certificate from the leaf up that carries one, and that certificate's
    /// position. Certificates above it (the attestation CA's) never carry one in a real chain.
    static func keyDescription(in certificates: [Certificate]) throws(AttestationFailure) -> (Int, KeyDescription)? {
        for (position, certificate) in certificates.enumerated() {
            if let extensionValue = certificate.extensions[oid: KeyDescription.oid] {
                return (position, try KeyDescription(derEncoded: extensionValue.value))
            }
        }
        return nil
    }

    static func subjectPublicKeyInfo(of certificate: Certificate) -> [UInt8] {
        var serializer = DER.Serializer()
        // A key that parsed serializes; an empty result would only fail the registered-key comparison.
        try? serializer.serialize(certificate.publicKey)
        return serializer.serializedBytes
    }
}
