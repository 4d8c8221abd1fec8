// Database values kept a few seconds on this node, bounded in size, never caching a miss.
import Foundation
import Synchronization

/// Values read from the database and kept a few seconds on this node: realms, host-token issuers, public clients,
/// enrolled identities. A change made on any node applies everywhere within `lifetime`. Only what exists is
/// cached, never a miss (keys come from requests and would grow it); `capacity` bounds it anyway: when full, the
/// expired entries go, and if none had expired, all of them.
final class ShortLivedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let lifetime: TimeInterval
    private let capacity: Int
    private let entries = Mutex<[Key: (value: Value, loadedAt: Date)]>([:])

    init(lifetime: TimeInterval, capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    func value(for key: Key, now: Date) -> Value? {
        guard let entry = entries.withLock({ $0[key] }), now.timeIntervalSince(entry.loadedAt) < lifetime else { return nil }
        return entry.value
    }

    func store(_ value: Value, for key: Key, now: Date) {
        entries.withLock { entries in
            if entries.count >= capacity, entries[key] == nil {
                entries = entries.filter { now.timeIntervalSince($0.value.loadedAt) < lifetime }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[key] = (value, now)
        }
    }

    func removeAll() { entries.withLock { $0.removeAll() } }
}
