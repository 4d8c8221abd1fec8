// The Play Integrity check that the evaluated app is this app: its package and signing-certificate digests.
import Foundation

/// The app Play evaluated is this app (`APP_IDENTITY_MISMATCH`): its package is one of the app's, and, when the app
/// lists its signing-certificate digests, one of the evaluated app's digests is on the list.
struct PlayAppIdentityRule: PlayIntegrityRule {
    let packageNames: [String]
    let certificateDigests: Set<[UInt8]>

    func check(_ verdict: PlayIntegrityVerdict, at time: Date) throws(AttestationFailure) -> AttestationCheck {
        guard let package = verdict.packageName else {
            throw AttestationFailure(.appIdentityMismatch, "the verdict names no evaluated package")
        }
        guard packageNames.contains(package) else {
            throw AttestationFailure(.appIdentityMismatch, "the evaluated package \(package.prefix(128)) is not one of [\(packageNames.joined(separator: ", "))]")
        }
        let digests = verdict.certificateSha256Digests
        guard !certificateDigests.isEmpty else {
            return AttestationCheck("appIdentity", .passed, "package \(package); no signing-certificate allow-list, \(digests.count) digest(s) not checked")
        }
        guard digests.contains(where: { Base64Variants.decode($0).map(certificateDigests.contains) ?? false }) else {
            throw AttestationFailure(.appIdentityMismatch, "no signing certificate digest of the app is allowed: [\(digests.prefix(8).map { String($0.prefix(64)) }.joined(separator: ", "))]")
        }
        return AttestationCheck("appIdentity", .passed, "package \(package) and a signing certificate digest allowed")
    }
}
