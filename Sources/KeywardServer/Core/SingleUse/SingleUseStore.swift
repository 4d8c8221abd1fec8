// The Core service through which every "accept this once" value is recorded and expired.
import Foundation

/// One value to accept once: `key` under `scope` (one scope per use: DPoP proofs per realm and key, host-token
/// `jti`s per issuer, spent device challenges, provider sign-in states, ...), remembered until `expiresAt`.
public struct SingleUseEntry: Sendable, Equatable {
    public var scope: String
    public var key: String
    public var expiresAt: Date

    public init(scope: String, key: String, expiresAt: Date) {
        self.scope = scope
        self.key = key
        self.expiresAt = expiresAt
    }
}

/// Every "accept this once" of Keyward goes through this Core service: a table with a unique (scope, key) and an
/// expiry, written atomically and swept when entries expire. Parts get it from `CoreServices.singleUse`, not from
/// each other.
public protocol SingleUseStore: Sendable {
    /// Records `key` under `scope` until `expiresAt`. Returns false (and writes nothing) when the pair
    /// is already recorded and not yet expired. One atomic statement; never read-then-write.
    func recordOnce(scope: String, key: String, expiresAt: Date, now: Date) async throws -> Bool
    /// `recordOnce` for several entries in one statement: for each, whether this call recorded it. Each entry is
    /// recorded or refused on its own, as separate calls in order would: a pair repeated in `entries` is recorded
    /// at most for its first occurrence.
    func recordEachOnce(_ entries: [SingleUseEntry], now: Date) async throws -> [Bool]
    /// Deletes entries that expired at or before `now`; returns how many were removed.
    func deleteExpired(now: Date) async throws -> Int
}

extension ExpiredRowSweep {
    /// Single-use records past their expiry.
    static func singleUse(_ store: any SingleUseStore) -> ExpiredRowSweep {
        ExpiredRowSweep("replayEntries") { now in try await store.deleteExpired(now: now) }
    }
}
