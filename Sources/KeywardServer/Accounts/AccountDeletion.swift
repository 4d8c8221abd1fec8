// A user deleting their own account from the account page, after a recent sign-in.
import Foundation
import HTTPTypes
import Hummingbird

/// A user deletes their own account from the account page: only within `BrowserSession.recentSignIn` of giving a first factor in
/// this session (otherwise they sign in again), and what goes is everything that is theirs — push devices,
/// identities at other issuers, browser sessions, the user — with an audit event.
struct AccountDeletion: Sendable {
    let renderer: PageRenderer
    let browser: BrowserRequests
    let users: UserService
    let removal: UserRemoval
    let clock: any KeywardClock

    func register(on router: some RouterMethods<KeywardRequestContext>) {
        router.get("/realms/:realm/account/delete") { request, context in try await confirm(request, context) }
        router.post("/realms/:realm/account/delete") { request, context in try await delete(request, context) }
    }

    private func confirm(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        guard let (session, user) = try await signedIn(request, realm: realm) else { return signInAgain(realm) }
        guard session.signedInRecently(now: clock.now()) else { return signInAgain(realm) }
        return renderer.page("deleteAccount", title: "Delete your account", realm: realm, context: [
            "username": user.username, "csrf": session.csrfToken, "action": PageURLs.account(realm) + "/delete", "accountURL": PageURLs.account(realm),
        ])
    }

    private func delete(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        guard let (session, user) = try await signedIn(request, realm: realm) else { return signInAgain(realm) }
        guard let form = try await browser.form(request), BrowserSessionService.csrfMatches(form["csrf"], session) else {
            return renderer.formExpired(realm: realm, backToAccount: true)
        }
        guard session.signedInRecently(now: clock.now()) else { return signInAgain(realm) }
        try await removal.delete(realm: realm, username: user.username)
        return renderer.redirect(to: PageURLs.login(realm) + "?notice=account-deleted", headers: browser.clearCookie)
    }

    private func signInAgain(_ realm: String) -> Response {
        renderer.signInAgain(realm, then: PageURLs.account(realm) + "/delete")
    }

    private func signedIn(_ request: Request, realm: String) async throws -> (BrowserSession, User)? {
        guard let (session, userId) = try await browser.signedIn(request, realm: realm), let user = try await users.user(realm: realm, id: userId)
        else { return nil }
        return (session, user)
    }

}
