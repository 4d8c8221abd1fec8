// Judging a device chain's validity dates, with clock leeway for the leaf a device dated itself.
import Foundation
import SwiftASN1
import X509

/// The validity periods of a candidate chain, as RFC 5280 judges them at the verification time, with one
/// allowance: the leaf may start up to `leafNotBeforeLeeway` after that time. A device dates the certificate of a
/// key it makes (an Android Keystore leaf; App Attest's credential certificate) from its own clock, which may run
/// minutes ahead of the server's, so a key made a moment ago could otherwise read as "not yet valid". Expiry has no
/// leeway, and the certificates above the leaf are CAs', whose dates owe nothing to a device clock.
struct DeviceCertificateValidity: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []
    let time: Date
    let leafNotBeforeLeeway: TimeInterval

    init(time: Date, leafNotBeforeLeeway: TimeInterval) {
        self.time = time
        // A negative, infinite or NaN setting must not widen anything.
        self.leafNotBeforeLeeway = leafNotBeforeLeeway.isFinite ? max(0, leafNotBeforeLeeway) : 0
    }

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        let time = self.time
        for (position, certificate) in chain.enumerated() {
            let notBefore = certificate.notValidBefore, notAfter = certificate.notValidAfter
            let name = position == 0 ? "the leaf" : "certificate \(position + 1) of the chain"
            guard notBefore <= notAfter else {
                return .failsToMeetPolicy(reason: "\(name) ends (\(notAfter.formatted(.iso8601))) before it starts (\(notBefore.formatted(.iso8601)))")
            }
            guard time <= notAfter else {
                return .failsToMeetPolicy(reason: "\(name) expired at \(notAfter.formatted(.iso8601))")
            }
            let latestStart = position == 0 ? time.addingTimeInterval(leafNotBeforeLeeway) : time
            guard notBefore <= latestStart else {
                let allowance = position == 0 ? " (\(leafNotBeforeLeeway) s of clock leeway included)" : ""
                return .failsToMeetPolicy(reason: "\(name) is valid only from \(notBefore.formatted(.iso8601))\(allowance)")
            }
        }
        return .meetsPolicy
    }
}
