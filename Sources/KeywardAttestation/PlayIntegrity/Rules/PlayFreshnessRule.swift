// The Play Integrity check that a token was requested recently, not held back and spent later.
import Foundation

/// The token was asked for recently (`STALE`): within `maxAge` before the verification time and no more than
/// `maxFutureSkew` after it. The nonce already binds it to one challenge; this bounds how long a token obtained on
/// a healthy device can be held back and spent later.
struct PlayFreshnessRule: PlayIntegrityRule {
    let maxAge: TimeInterval
    let maxFutureSkew: TimeInterval

    func check(_ verdict: PlayIntegrityVerdict, at time: Date) throws(AttestationFailure) -> AttestationCheck {
        let requested = Double(verdict.timestampMillis) / 1000
        let age = time.timeIntervalSince1970 - requested
        guard age <= maxAge else {
            throw AttestationFailure(.stale, "the token was requested \(Self.seconds(age)) s before the verification time; at most \(Self.seconds(maxAge)) s are allowed")
        }
        guard -age <= maxFutureSkew else {
            throw AttestationFailure(.stale, "the token is dated \(Self.seconds(-age)) s after the verification time; at most \(Self.seconds(maxFutureSkew)) s are allowed")
        }
        return AttestationCheck("timestamp", .passed, "requested \(String(format: "%.3f", age)) s before the verification time")
    }

    /// Whole seconds for the detail; a window the operator set to infinity prints as such instead of trapping.
    static func seconds(_ value: TimeInterval) -> String {
        value.isFinite && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
