// The account page's browser sessions: listing them, ending one, and signing out everywhere.
import Foundation
import HTTPTypes
import Hummingbird

/// The account page's browser sessions: the list (browser, how the user signed in, when it began and was last
/// used), ending one, and signing out everywhere. Sessions are server-side rows, so an ended session stops at once
/// on every node — the ADR's stateless tokens could not be revoked. Ending another browser's session asks for a
/// recent sign-in (`BrowserSession.recentSignIn`), as linking a provider does: a stolen session must not be able to
/// end its owner's.
struct AccountSessions: Sendable {
    let renderer: PageRenderer
    let browser: BrowserRequests
    let audit: AuditLog
    let clock: any KeywardClock

    func register(on router: some RouterMethods<KeywardRequestContext>) {
        router.post("/realms/:realm/account/sessions/:id/end") { request, context in try await endOne(request, context) }
        router.post("/realms/:realm/account/sessions/end-all") { request, context in try await endAll(request, context) }
        router.post("/realms/:realm/account/apps/:id/end") { request, context in try await endApp(request, context) }
    }

    /// The rows of the account page's app table: the apps signed in from the user's browser sessions.
    func appRows(realm: String, userId: String, current: BrowserSession) async throws -> [[String: Any]] {
        let formatter = Self.dateFormatter()
        return try await (browser.plugins.appSessions?.appSessions(realm: realm, userId: userId) ?? []).map { app in
            [
                "client": app.clientId, "started": formatter.string(from: app.createdAt) + " UTC",
                "lastUsed": formatter.string(from: app.lastUsedAt) + " UTC", "csrf": current.csrfToken,
                "endAction": PageURLs.account(realm) + "/apps/\(app.id)/end",
            ]
        }
    }

    /// Signs one app out: its refresh tokens stop working at once.
    private func endApp(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        guard let (session, userId) = try await browser.signedIn(request, realm: realm) else { return renderer.redirect(to: PageURLs.login(realm)) }
        guard let form = try await browser.form(request), BrowserSessionService.csrfMatches(form["csrf"], session) else { return expiredForm(realm) }
        let ended = try await browser.plugins.appSessions?.endAppSession(realm: realm, userId: userId, id: context.parameters.get("id") ?? "") ?? false
        guard ended else { return renderer.redirect(to: PageURLs.account(realm) + "?notice=app-gone") }
        await audit.record(.sessionEnded, realm: realm, userId: userId, details: ["app": "true"])
        return renderer.redirect(to: PageURLs.account(realm) + "?notice=app-ended")
    }

    private static func dateFormatter() -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withSpaceBetweenDateAndTime]
        return formatter
    }

    /// The rows of the account page's session table; `current` is marked instead of offered for ending.
    func rows(realm: String, userId: String, current: BrowserSession) async throws -> [[String: Any]] {
        let formatter = Self.dateFormatter()
        return try await browser.sessions.sessions(realm: realm, userId: userId).map { session in
            [
                "browser": Self.browserName(session.userAgent), "how": Self.signInMethod(session.amr),
                "started": formatter.string(from: session.createdAt) + " UTC", "lastSeen": formatter.string(from: session.lastSeenAt) + " UTC",
                "isCurrent": session.idHash == current.idHash, "csrf": current.csrfToken,
                "endAction": PageURLs.account(realm) + "/sessions/\(session.idHash)/end",
            ]
        }
    }

    private func endOne(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        guard let (session, userId) = try await browser.signedIn(request, realm: realm) else { return renderer.redirect(to: PageURLs.login(realm)) }
        guard let form = try await browser.form(request), BrowserSessionService.csrfMatches(form["csrf"], session) else { return expiredForm(realm) }
        let target = context.parameters.get("id") ?? ""
        guard target == session.idHash || session.signedInRecently(now: clock.now()) else { return renderer.signInAgain(realm) }
        guard try await browser.sessions.end(realm: realm, userId: userId, idHash: target) else {
            return renderer.redirect(to: PageURLs.account(realm) + "?notice=session-gone")
        }
        await audit.record(.sessionEnded, realm: realm, userId: userId, details: ["current": String(target == session.idHash)])
        if target == session.idHash {
            return renderer.redirect(to: PageURLs.login(realm) + "?notice=logged-out", headers: browser.clearCookie)
        }
        return renderer.redirect(to: PageURLs.account(realm) + "?notice=session-ended")
    }

    private func endAll(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        guard let (session, userId) = try await browser.signedIn(request, realm: realm) else { return renderer.redirect(to: PageURLs.login(realm)) }
        guard let form = try await browser.form(request), BrowserSessionService.csrfMatches(form["csrf"], session) else { return expiredForm(realm) }
        guard session.signedInRecently(now: clock.now()) else { return renderer.signInAgain(realm) }
        let ended = try await browser.sessions.endAll(realm: realm, userId: userId)
        await audit.record(.sessionsEndedEverywhere, realm: realm, userId: userId, details: ["sessions": String(ended)])
        return renderer.redirect(to: PageURLs.login(realm) + "?notice=logged-out", headers: browser.clearCookie)
    }


    private func expiredForm(_ realm: String) -> Response {
        renderer.formExpired(realm: realm, backToAccount: true)
    }

    /// "Firefox on Linux"-style names from a User-Agent, enough to tell one's own browsers apart.
    static func browserName(_ userAgent: String?) -> String {
        guard let agent = userAgent, !agent.isEmpty else { return "Unknown browser" }
        let browsers = [("Edg/", "Edge"), ("OPR/", "Opera"), ("Firefox/", "Firefox"), ("Chrome/", "Chrome"), ("Chromium/", "Chromium"), ("Safari/", "Safari")]
        let systems = [("Android", "Android"), ("iPhone", "iPhone"), ("iPad", "iPad"), ("Mac OS X", "macOS"), ("Windows", "Windows"), ("Linux", "Linux")]
        let name = browsers.first { agent.contains($0.0) }?.1
        let system = systems.first { agent.contains($0.0) }?.1
        switch (name, system) {
        case let (name?, system?): return "\(name) on \(system)"
        case let (name?, nil): return name
        case let (nil, system?): return "A browser on \(system)"
        default: return String(agent.prefix(40))
        }
    }

    static func signInMethod(_ amr: [String]) -> String {
        let first = amr.contains("fed") ? "Identity provider" : amr.contains("pwd") ? "Password" : amr.first == "hwk" ? "Passkey" : "Unknown"
        if amr.contains("mfa") { return first + " + phone" }
        return amr.contains("hwk") && first != "Passkey" ? first + " + passkey" : first
    }
}
