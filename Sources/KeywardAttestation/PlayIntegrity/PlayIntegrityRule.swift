// The shape of one Play Integrity policy check.
import Foundation

/// One rule of `PlayIntegrityPolicy`: refuses with its own stable reason, or says what it found.
protocol PlayIntegrityRule: Sendable {
    func check(_ verdict: PlayIntegrityVerdict, at time: Date) throws(AttestationFailure) -> AttestationCheck
}
