// The Play Integrity check that the device meets the integrity level the app's policy asks for.
import Foundation

/// The device meets the integrity the app asks for (`DEVICE_INTEGRITY_REFUSED`); a device verdict that is missing or
/// empty meets none.
struct PlayDeviceIntegrityRule: PlayIntegrityRule {
    let requirement: PlayIntegrityPolicy.DeviceIntegrityRequirement

    func check(_ verdict: PlayIntegrityVerdict, at time: Date) throws(AttestationFailure) -> AttestationCheck {
        let verdicts = verdict.deviceRecognitionVerdicts
        let accepted = requirement.acceptedVerdicts
        guard let met = verdicts.first(where: accepted.contains) else {
            let found = verdicts.isEmpty ? "no device verdict" : "[\(verdicts.prefix(8).map { String($0.prefix(64)) }.joined(separator: ", "))]"
            throw AttestationFailure(.deviceIntegrityRefused, "\(found); the policy (\(requirement.rawValue)) wants one of \(accepted.sorted().joined(separator: ", "))")
        }
        return AttestationCheck("deviceIntegrity", .passed, "\(met) (policy \(requirement.rawValue))")
    }
}
