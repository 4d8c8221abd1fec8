import Foundation

/// The token was asked for recently (`STALE`): within `maxAge` before the verification time and no more than
/// `maxFutureSkew` after it. The nonce already binds it to one challenge; this bounds how long a token obtained on
/// a healthy device can be held back and spent later.
struct PlayFreshnessRule: PlayIntegrityRule {
    let maxAge: TimeInterval
    let maxFutureSkew: TimeInterval

    func check(_ verdict: PlayIntegrityVerdict, at time: Date) throws(AttestationFailure) -> PlayIntegrityCheck {
        let requested = Double(verdict.timestampMillis) / 1000
        let age = time.timeIntervalSince1970 - requested
        guard age <= maxAge else {
            throw AttestationFailure(.stale, "the token was requested \(Int64(age)) s before the verification time; at most \(Int64(maxAge)) s are allowed")
        }
        guard -age <= maxFutureSkew else {
            throw AttestationFailure(.stale, "the token is dated \(Int64(-age)) s after the verification time; at most \(Int64(maxFutureSkew)) s are allowed")
        }
        return PlayIntegrityCheck("timestamp", .passed, "requested \(String(format: "%.3f", age)) s before the verification time")
    }
}
