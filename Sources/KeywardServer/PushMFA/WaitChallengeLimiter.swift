// Wait-challenge rate limiting: each new login challenge doubles the wait before the next.
import Foundation

/// Wait-challenge rate limiting (docs/PUSH-MFA-PROTOCOL.md §6.3): each created login challenge doubles the wait before the
/// next one — base, 2×base, 4×base … capped at max — until an approval, or until `resetHours` have passed
/// since the first unapproved challenge. Denials do not reset it.
struct WaitChallengeLimiter: Sendable {
    let settings: PushMFASettings

    /// Seconds the user must still wait before a new challenge, or nil when one may be created now.
    func remainingWait(_ state: WaitChallengeState?, now: Date) -> Int? {
        guard settings.waitChallengeEnabled, let state, !isReset(state, now: now), state.challengeCount > 0 else { return nil }
        let wait = requiredWait(afterChallenges: state.challengeCount)
        // Compared in whole milliseconds, the precision the state is stored with.
        let remainingMillis = Self.milliseconds(state.lastAt) + Int64(wait) * 1000 - Self.milliseconds(now)
        return remainingMillis > 0 ? Int((remainingMillis + 999) / 1000) : nil
    }

    private static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// The state after one more challenge was created at `now`.
    func recordingChallenge(_ state: WaitChallengeState?, now: Date) -> WaitChallengeState {
        guard let state, !isReset(state, now: now) else { return WaitChallengeState(challengeCount: 1, firstAt: now, lastAt: now) }
        return WaitChallengeState(challengeCount: state.challengeCount + 1, firstAt: state.firstAt, lastAt: now)
    }

    /// base × 2^(n−1), capped at max, without overflowing for large n.
    func requiredWait(afterChallenges count: Int) -> Int {
        let base = max(settings.waitChallengeBaseSeconds, 1)
        let cap = max(settings.waitChallengeMaxSeconds, base)
        var wait = base
        for _ in 1..<max(count, 1) {
            wait *= 2
            if wait >= cap { return cap }
        }
        return min(wait, cap)
    }

    private func isReset(_ state: WaitChallengeState, now: Date) -> Bool {
        now.timeIntervalSince(state.firstAt) >= TimeInterval(settings.waitChallengeResetHours * 3600)
    }
}
