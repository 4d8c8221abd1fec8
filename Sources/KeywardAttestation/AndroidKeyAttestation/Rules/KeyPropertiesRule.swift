/// The key is the kind the app registers (`KEY_PROPERTIES_REFUSED`): its algorithm and curve, the SIGN purpose,
/// and origin GENERATED, read from the list the key's security level enforces.
struct KeyPropertiesRule: AndroidAttestationRule {
    let algorithm: AndroidAttestationPolicy.KeyAlgorithmRequirement
    let requireSign: Bool
    let requireGenerated: Bool

    func check(_ evidence: AndroidAttestationEvidence) throws(AttestationFailure) -> AttestationCheck {
        let list = evidence.keyDescription.keyProperties
        let found = describe(list)
        switch algorithm {
        case .ecP256:
            // Keymaster 2 could leave the curve out and give only the size; 256 bits of EC is P-256 there.
            let isP256 = list.ecCurve == .p256 || (list.ecCurve == nil && list.keySize == 256)
            guard list.algorithm == .ec, isP256 else { throw refused("an EC P-256 key is required", found) }
        case .rsa:
            guard list.algorithm == .rsa else { throw refused("an RSA key is required", found) }
        case .any:
            break
        }
        if requireSign, !(list.purposes ?? []).contains(.sign) {
            throw refused("the SIGN purpose is required", found)
        }
        if requireGenerated, list.origin != .generated {
            throw refused("a key generated in the secure hardware (origin GENERATED) is required", found)
        }
        let judged = algorithm != .any || requireSign || requireGenerated
        return AttestationCheck("keyProperties", judged ? .passed : .notChecked, found)
    }

    private func refused(_ rule: String, _ found: String) -> AttestationFailure {
        AttestationFailure(.keyPropertiesRefused, "\(rule); the key is \(found)")
    }

    private func describe(_ list: AuthorizationList) -> String {
        let algorithm = list.algorithm.map(String.init(describing:)) ?? "of no stated algorithm"
        let curve = list.ecCurve.map { " \($0)" } ?? ""
        let size = list.keySize.map { " \($0)-bit" } ?? ""
        let purposes = (list.purposes ?? []).map(String.init(describing:)).joined(separator: "+")
        let origin = list.origin.map(String.init(describing:)) ?? "unstated"
        return "\(algorithm)\(curve)\(size), purposes \(purposes.isEmpty ? "none" : purposes), origin \(origin)"
    }
}
