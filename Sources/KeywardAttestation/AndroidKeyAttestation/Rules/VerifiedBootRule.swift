/// The device booted an image verified by its maker's key, with the bootloader locked (`BOOT_STATE_REFUSED`), as
/// the secure hardware recorded it (hardware-enforced rootOfTrust; a software claim counts for nothing).
struct VerifiedBootRule: AndroidAttestationRule {
    let required: Bool

    func check(_ evidence: AndroidAttestationEvidence) throws(AttestationFailure) -> AttestationCheck {
        let rootOfTrust = evidence.keyDescription.hardwareEnforced.rootOfTrust
        let found = rootOfTrust.map { "\($0.verifiedBootState), \($0.deviceLocked ? "locked" : "unlocked")" }
            ?? "no hardware-enforced root of trust"
        guard required else {
            return AttestationCheck("verifiedBoot", .notChecked, found)
        }
        guard let rootOfTrust, rootOfTrust.verifiedBootState == .verified, rootOfTrust.deviceLocked else {
            throw AttestationFailure(.bootStateRefused, "verified boot and a locked bootloader are required; the device reports \(found)")
        }
        return AttestationCheck("verifiedBoot", .passed, found)
    }
}
