// Push MFA's server settings: the device API's DPoP rules, the event streams' limits, and pushes in flight.
import Foundation

/// What push MFA reads of the configuration (`pushMfa.*`, `sse.*`, `push.maxConcurrentSends`), validated when the
/// configuration loads. A realm's own push-MFA settings are `PushMFASettings`, stored with the realm.
struct PushMFAServerSettings: Sendable {
    /// `pushMfa.requireAth`, `pushMfa.dpopIatTolerance`, `pushMfa.dpopJtiTtl` (seconds).
    var requireAth = true
    var dpopIatTolerance = 120
    var dpopJtiTTL = 300
    /// `sse.*`: the challenge event streams.
    var events = ChallengeEventStream.Options()
    /// `push.maxConcurrentSends`.
    var maxConcurrentSends = 64
}
