// App sessions (refresh-token families) as the account page and the ending of browser sessions see them.
import Foundation
import Logging

/// The refresh-token families behind Accounts' `AppSessionDirectory`: the account page lists and ends them, and
/// signing out (one browser, everywhere, a disabled account) ends the families that came from those sessions.
struct AppSessions: AppSessionDirectory {
    let store: any RefreshFamilyStore
    let clock: any KeywardClock
    let logger: Logger

    func appSessions(realm: String, userId: String) async throws -> [AppSessionSummary] {
        try await store.liveFamilies(realm: realm, userId: userId, now: clock.now()).map {
            AppSessionSummary(id: $0.id, clientId: $0.clientId, browserSessionId: $0.sessionId, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt)
        }
    }

    func endAppSession(realm: String, userId: String, id: String) async throws -> Bool {
        try await store.revoke(realm: realm, userId: userId, id: id, now: clock.now())
    }

    func browserSessionsEnded(realm: String, userId: String, browserSessionIds: [String]) async {
        do {
            _ = try await store.revokeAll(realm: realm, userId: userId, sessionIds: browserSessionIds, now: clock.now())
        } catch {
            logger.error("app sessions of ended browser sessions not revoked", metadata: ["realm": "\(realm)", "error": "\(error)"])
        }
    }

    func allSessionsEnded(realm: String, userId: String) async {
        do {
            _ = try await store.revokeAll(realm: realm, userId: userId, now: clock.now())
        } catch {
            logger.error("app sessions of the user not revoked", metadata: ["realm": "\(realm)", "error": "\(error)"])
        }
    }
}
