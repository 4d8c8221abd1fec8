// What apps hold from a person's browser sessions, as Accounts sees it: listed on the account page, ended with them.
import Foundation

/// One app's sign-in that came from a browser session (issue 28: a refresh-token family).
struct AppSessionSummary: Sendable, Equatable {
    let id: String
    let clientId: String
    /// The browser session it came from (`BrowserSession.lastingId`).
    let browserSessionId: String
    let createdAt: Date
    let lastUsedAt: Date
}

/// What apps hold from browser sessions, implemented by the part that issues it (OpenID): the account page lists
/// and ends them, and ending browser sessions ends what apps hold from them. Accounts names no implementation.
protocol AppSessionDirectory: Sendable {
    /// The user's live app sessions, newest first.
    func appSessions(realm: String, userId: String) async throws -> [AppSessionSummary]
    /// Ends one of the user's app sessions; false when the user has no such live one.
    func endAppSession(realm: String, userId: String, id: String) async throws -> Bool
    /// Browser sessions of the user ended (signed out, ended from the account page): the app sessions that came from
    /// them end too. Best effort: a failure is logged, never undoes the sign-out.
    func browserSessionsEnded(realm: String, userId: String, browserSessionIds: [String]) async
    /// Every browser session of the user ended (signed out everywhere, the account disabled): every app session ends.
    func allSessionsEnded(realm: String, userId: String) async
}
