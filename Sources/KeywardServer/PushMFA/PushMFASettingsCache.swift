import Foundation
import Synchronization

/// Realm settings are read on every login step but change rarely: each node keeps them for a few seconds (like
/// realms), and a save on this node replaces them at once. A change made by the CLI or another node shows within
/// `lifetime`.
final class PushMFASettingsCache: Sendable {
    private let entries = Mutex<[String: (settings: PushMFASettings, loadedAt: Date)]>([:])
    let lifetime: TimeInterval

    init(lifetime: TimeInterval = 5) {
        self.lifetime = lifetime
    }

    func settings(realm: String, now: Date, load: () async throws -> PushMFASettings) async throws -> PushMFASettings {
        if let cached = entries.withLock({ $0[realm] }), now.timeIntervalSince(cached.loadedAt) < lifetime, now >= cached.loadedAt {
            return cached.settings
        }
        let settings = try await load()
        entries.withLock { $0[realm] = (settings, now) }
        return settings
    }

    func store(_ settings: PushMFASettings, realm: String, now: Date) {
        entries.withLock { $0[realm] = (settings, now) }
    }
}
