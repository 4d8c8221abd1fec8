// Accounts, assembled: local users and their password work, identity providers, browser sessions, the sign-in
// throttle, the one login flow with its plugged-in second factor, and the sign-in and account pages.
import Foundation
import Hummingbird

public struct AccountsAssembly: KeywardPart {
    public let users: UserService
    public let browserSessions: BrowserSessionService
    public let loginThrottle: LoginThrottle
    /// The identity providers people sign in with (`keyward providers`).
    public let providers: IdentityProviderService
    let sessionStore: any BrowserSessionStore
    let loginAttemptStore: any LoginAttemptStore
    /// What other parts plug in as they are assembled: the second factor, removal and unlink steps.
    let plugins = AccountPlugins()
    /// The browser side every page shares (session cookie, forms, CSRF, client address).
    let browser: BrowserRequests
    private let realms: RealmService
    private let core: CoreServices

    init(_ core: CoreServices, oauth: OAuthAssembly, settings: AccountsSettings) {
        self.core = core
        realms = oauth.realms
        sessionStore = SQLBrowserSessionStore(database: core.database)
        loginAttemptStore = SQLLoginAttemptStore(database: core.database)
        users = UserService(
            store: SQLUserStore(database: core.database), identities: SQLExternalIdentityStore(database: core.database), sessions: sessionStore, audit: core.audit, clock: core.clock,
            passwordKey: core.masterKey.derivedKey(purpose: PasswordHasher.keyPurpose), bcryptCost: UInt8(settings.bcryptCost),
            passwordWork: PasswordWork(
                threads: settings.passwordThreads, maxInFlight: settings.maxConcurrentPasswordChecks,
                record: { [metrics = core.metrics] ran in metrics.passwordChecked(ran: ran) }
            ),
            plugins: plugins
        )
        browserSessions = BrowserSessionService(
            store: sessionStore, clock: core.clock, preLoginKey: core.masterKey.derivedKey(purpose: PreLoginState.keyPurpose), plugins: plugins
        )
        providers = IdentityProviderService(
            store: SQLIdentityProviderStore(database: core.database), masterKey: core.masterKey, audit: core.audit, clock: core.clock
        )
        loginThrottle = LoginThrottle(store: loginAttemptStore, clock: core.clock, maxAttemptsPerAddress: settings.loginAttemptsPerAddress)
        browser = BrowserRequests(
            sessions: browserSessions, secureCookies: core.settings.publicURL.lowercased().hasPrefix("https://"),
            maxBodySize: core.settings.maxBodySize, clients: core.settings.clients, plugins: plugins
        )
    }

    /// The end of every first factor (the sign-in page, each provider callback): the session and the next step.
    var signInCompletion: SignInCompletion {
        SignInCompletion(sessions: browserSessions, secondFactor: plugins.secondFactor, audit: core.audit)
    }

    /// Deleting a user with what the other parts hold for them (`keyward users delete`, the account page).
    var removal: UserRemoval { UserRemoval(users: users) { [plugins] in plugins.removalSteps } }

    /// The session JSON API, and the sign-in and account pages.
    func registerRoutes(on router: Router<KeywardRequestContext>, web: PageSurface) {
        let (renderer, clock) = (web.renderer, core.clock)
        SessionRoutes(browser: browser, realms: realms, users: users).register(on: router)
        let accountSessions = AccountSessions(renderer: renderer, browser: browser, audit: core.audit, clock: clock)
        accountSessions.register(on: web.pages)
        AccountDeletion(renderer: renderer, browser: browser, users: users, removal: removal, clock: clock).register(on: web.pages)
        let accountIdentities = AccountIdentities(
            renderer: renderer, browser: browser, users: users, providers: providers, unlinkSteps: plugins.unlinkSteps, clock: clock
        )
        accountIdentities.register(on: web.pages)
        LoginPages(
            renderer: renderer, browser: browser, users: users, secondFactor: plugins.secondFactor, throttle: loginThrottle,
            signIn: signInCompletion, providers: providers, accountSessions: accountSessions, accountIdentities: accountIdentities, plugins: plugins
        ).register(on: web.pages)
    }

    func shutdown() async {
        await users.passwordWork.shutdown()
    }
}

extension AccountsAssembly {
    static let migrations = [
        UsersSchemaMigration.piece, BrowserSessionSchemaMigration.piece, LoginThrottleSchemaMigration.piece,
        ExternalIdentitySchemaMigration.piece, IdentityProviderSchemaMigration.piece, AppleRevocationSchemaMigration.piece,
        NewAccountSchemaMigration.piece, SessionSignInTimeSchemaMigration.piece, UserRevisionSchemaMigration.piece,
        UserProfileSchemaMigration.piece,
    ]

    var sweeps: [ExpiredRowSweep] { [.browserSessions(sessionStore), .loginAttempts(loginAttemptStore)] }
}

extension ExpiredRowSweep {
    /// Longer than any login-throttle window, so a sweep never cuts one short.
    static let loginAttemptRetention: TimeInterval = 86400

    /// Browser sessions past their idle or absolute limit.
    static func browserSessions(_ store: any BrowserSessionStore) -> ExpiredRowSweep {
        ExpiredRowSweep("browserSessions") { now in try await store.deleteExpiredSessions(now: now) }
    }

    /// Login-attempt windows that ended a day or more ago.
    static func loginAttempts(_ store: any LoginAttemptStore) -> ExpiredRowSweep {
        ExpiredRowSweep("loginAttempts") { now in try await store.deleteAttempts(windowStartedBefore: now.addingTimeInterval(-loginAttemptRetention)) }
    }
}
