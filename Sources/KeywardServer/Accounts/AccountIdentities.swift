// The account page's sign-in providers: those linked, those linkable, and unlinking one.
import Foundation
import HTTPTypes
import Hummingbird

/// The account page's sign-in providers: those linked to the user (each with an unlink button, except the last way
/// the user signs in) and those of the realm they can link next. Linking itself is a provider flow
/// (`ProviderSignInRoutes`, `POST /realms/{realm}/account/link/{alias}`); unlinking is here.
struct AccountIdentities: Sendable {
    let renderer: PageRenderer
    let browser: BrowserRequests
    let users: UserService
    let providers: IdentityProviderService
    /// What other parts do once an identity is unlinked (revoke its Apple token).
    let unlinkSteps: [any IdentityUnlinkStep]
    let clock: any KeywardClock

    func register(on router: some RouterMethods<KeywardRequestContext>) {
        router.post("/realms/:realm/account/identities/unlink") { request, context in try await unlink(request, context) }
    }

    /// The account page's two lists: `identities` (linked) and `linkable` (the realm's other providers).
    func rows(realm: String, user: User, session: BrowserSession) async throws -> (identities: [[String: Any]], linkable: [[String: Any]]) {
        let linked = try await users.identities(realm: realm, userId: user.id).filter { $0.kind == .provider }
        let realmProviders = try await providers.list(realm: realm)
        let names = Dictionary(realmProviders.map { ($0.alias, $0.displayName) }, uniquingKeysWith: { first, _ in first })
        // The last way in stays: with no password, another identity at a provider the realm still has must remain.
        let working = linked.filter { identity in realmProviders.contains { $0.alias == identity.details?.alias && $0.issuer == identity.issuer } }
        let elsewhere = try await users.waysInElsewhere(realm: realm, userId: user.id)
        let identities: [[String: Any]] = linked.map { identity in
            let canUnlink = user.passwordHash != nil || elsewhere > 0 || working.contains { $0.issuer != identity.issuer || $0.subject != identity.subject }
            let alias = identity.details?.alias ?? identity.issuer
            var row: [String: Any] = [
                "provider": names[alias] ?? alias, "email": identity.details?.email ?? "no e-mail shared",
                "issuer": identity.issuer, "subject": identity.subject, "csrf": session.csrfToken,
                "unlinkAction": PageURLs.account(realm) + "/identities/unlink",
            ]
            if canUnlink { row["canUnlink"] = true }
            return row
        }
        let linkedKeys = Set(linked.map { "\($0.details?.alias ?? "")\u{0}\($0.issuer)" })
        let linkable: [[String: Any]] = realmProviders.filter { !linkedKeys.contains("\($0.alias)\u{0}\($0.issuer)") }.map { provider in
            ["alias": provider.alias, "name": provider.displayName, "csrf": session.csrfToken, "linkAction": PageURLs.account(realm) + "/link/\(provider.alias)"]
        }
        return (identities, linkable)
    }

    private func unlink(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        guard let (session, userId) = try await browser.signedIn(request, realm: realm) else {
            return renderer.redirect(to: PageURLs.login(realm) + "?return_to=" + PageURLs.account(realm))
        }
        guard let form = try await browser.form(request), BrowserSessionService.csrfMatches(form["csrf"], session),
            let issuer = form["issuer"], let subject = form["subject"]
        else {
            return renderer.formExpired(realm: realm, backToAccount: true)
        }
        // Unlinking changes how the account is reached, as linking does: only soon after a sign-in.
        guard session.signedInRecently(now: clock.now()) else { return renderer.signInAgain(realm) }
        // Read before it goes: an Apple identity's token is revoked at Apple once it is unlinked.
        let identity = try await users.identities(realm: realm, userId: userId).first { $0.issuer == issuer && $0.subject == subject }
        switch try await users.unlinkProvider(realm: realm, userId: userId, issuer: issuer, subject: subject) {
        case .unlinked:
            if let identity { for step in unlinkSteps { await step.unlinked(identity) } }
            return renderer.redirect(to: PageURLs.account(realm) + "?notice=unlinked")
        case .lastWayIn:
            return renderer.page("message", title: "Cannot unlink", realm: realm, context: [
                "heading": "This is how you sign in",
                "text": "It is the only way into your account. Link another provider or add a passkey first, then unlink this one.", "isError": true,
                "link": ["href": PageURLs.account(realm), "label": "Back to your account"],
            ], status: .conflict)
        case .notFound:
            return renderer.redirect(to: PageURLs.account(realm) + "?notice=unlinked-already")
        }
    }
}
