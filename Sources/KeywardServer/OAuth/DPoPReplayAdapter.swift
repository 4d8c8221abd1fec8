// Recording DPoP proof jtis as single-use values, at once or held back for the token endpoint's one write.
import Foundation
import KeywardJOSE
import Synchronization

/// Records DPoP proof `jti`s in the shared replay table, scoped per realm and proof key
/// (a jti only needs to be unique per key; scoping by key stops one client from burning another's jtis).
struct DPoPReplayAdapter: DPoPReplayCache {
    let store: any SingleUseStore
    let scope: String

    func recordOnce(jti: String, keyThumbprint: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await store.recordOnce(scope: scope, key: keyThumbprint + ":" + jti, expiresAt: expiresAt, now: now)
    }
}

/// Holds a proof's `jti` back instead of recording it, so the token endpoint can record it in the same statement
/// as the grant's own single-use value (`SingleUseStore.recordEachOnce`): one write per exchange instead of two.
/// Used only where that statement follows; it answers "fresh" and leaves the verdict to it.
final class DeferredDPoPReplay: DPoPReplayCache {
    private let scope: String
    private let held = Mutex<SingleUseEntry?>(nil)

    init(scope: String) { self.scope = scope }

    /// The entry to record, once the verifier has asked.
    var entry: SingleUseEntry? { held.withLock { $0 } }

    func recordOnce(jti: String, keyThumbprint: String, expiresAt: Date, now: Date) async throws -> Bool {
        held.withLock { $0 = SingleUseEntry(scope: scope, key: keyThumbprint + ":" + jti, expiresAt: expiresAt) }
        return true
    }
}
