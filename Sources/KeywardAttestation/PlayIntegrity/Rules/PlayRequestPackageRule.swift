// The Play Integrity check that the token was requested by one of the app's own packages.
import Foundation

/// The token was asked for by one of the app's packages (`APP_IDENTITY_MISMATCH`): a token another app obtained,
/// even a genuine one, does not vouch for this app's installation.
struct PlayRequestPackageRule: PlayIntegrityRule {
    let packageNames: [String]

    func check(_ verdict: PlayIntegrityVerdict, at time: Date) throws(AttestationFailure) -> AttestationCheck {
        let requested = verdict.requestPackageName
        guard packageNames.contains(requested) else {
            throw AttestationFailure(.appIdentityMismatch, "the token was requested by \(requested.prefix(128)), not by [\(packageNames.joined(separator: ", "))]")
        }
        return AttestationCheck("requestPackage", .passed, requested)
    }
}
