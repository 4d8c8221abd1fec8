import Foundation
import KeywardJOSE

/// Records DPoP proof `jti`s in the shared replay table, scoped per realm and proof key
/// (a jti only needs to be unique per key; scoping by key stops one client from burning another's jtis).
struct DPoPReplayAdapter: DPoPReplayCache {
    let store: any ReplayStore
    let scope: String

    func recordOnce(jti: String, keyThumbprint: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await store.recordOnce(scope: scope, key: keyThumbprint + ":" + jti, expiresAt: expiresAt, now: now)
    }
}
