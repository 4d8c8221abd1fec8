// The Android attestation check that the key belongs to the app: its package names and signing digests.
import Foundation

/// The key belongs to the app (`APP_IDENTITY_MISMATCH`): one attested package name is on the app's list, and one
/// attested signing-certificate digest is on its list. Each list is checked only when the app has one.
struct AppIdentityRule: AndroidAttestationRule {
    let packageNames: Set<String>
    let signingCertDigests: Set<[UInt8]>

    func check(_ evidence: AndroidAttestationEvidence) throws(AttestationFailure) -> AttestationCheck {
        let identity = evidence.keyDescription.attestationApplicationId
        let names = identity?.packages.map(\.name) ?? []
        let digests = identity?.signatureDigests ?? []
        let found = "packages [\(names.map { String($0.prefix(128)) }.joined(separator: ", "))], "
            + "\(digests.count) signing certificate digest(s)"
        guard !packageNames.isEmpty || !signingCertDigests.isEmpty else {
            return AttestationCheck("appIdentity", .notChecked, "no package or digest allow-list; \(found)")
        }
        guard identity != nil else {
            throw AttestationFailure(.appIdentityMismatch, "the attestation names no application")
        }
        if !packageNames.isEmpty, !names.contains(where: packageNames.contains) {
            throw AttestationFailure(.appIdentityMismatch, "no attested package is allowed: \(found)")
        }
        if !signingCertDigests.isEmpty, !digests.contains(where: signingCertDigests.contains) {
            let attested = digests.map { Data($0).base64EncodedString() }.joined(separator: ", ")
            throw AttestationFailure(.appIdentityMismatch, "no attested signing certificate digest is allowed: [\(attested)]")
        }
        let checked = [packageNames.isEmpty ? nil : "package name", signingCertDigests.isEmpty ? nil : "signing certificate digest"]
            .compactMap { $0 }.joined(separator: " and ")
        return AttestationCheck("appIdentity", .passed, "\(checked) allowed; \(found)")
    }
}
