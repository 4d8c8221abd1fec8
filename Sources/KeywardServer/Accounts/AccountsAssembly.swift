// Accounts, assembled: local users and their password work, identity providers, browser sessions, the sign-in
// throttle, and the sign-in and account pages.
import Hummingbird

public struct AccountsAssembly: Sendable {
    public let users: UserService
    public let browserSessions: BrowserSessionService
    public let loginThrottle: LoginThrottle
    /// The identity providers people sign in with (`keyward providers`).
    public let providers: IdentityProviderService
    let sessionStore: any BrowserSessionStore
    let loginAttemptStore: any LoginAttemptStore

    init(_ core: CoreServices) {
        let configuration = core.configuration
        sessionStore = SQLBrowserSessionStore(database: core.database)
        loginAttemptStore = SQLLoginAttemptStore(database: core.database)
        users = UserService(
            store: SQLUserStore(database: core.database), identities: SQLExternalIdentityStore(database: core.database), sessions: sessionStore, audit: core.audit, clock: core.clock,
            passwordKey: core.masterKey.derivedKey(purpose: PasswordHasher.keyPurpose), bcryptCost: UInt8(configuration.bcryptCost),
            passwordWork: PasswordWork(
                threads: configuration.passwordThreads, maxInFlight: configuration.maxConcurrentPasswordChecks,
                record: { [metrics = core.metrics] ran in metrics.passwordChecked(ran: ran) }
            )
        )
        browserSessions = BrowserSessionService(
            store: sessionStore, clock: core.clock, preLoginKey: core.masterKey.derivedKey(purpose: PreLoginState.keyPurpose)
        )
        providers = IdentityProviderService(
            store: SQLIdentityProviderStore(database: core.database), masterKey: core.masterKey, audit: core.audit, clock: core.clock
        )
        loginThrottle = LoginThrottle(store: loginAttemptStore, clock: core.clock, maxAttemptsPerAddress: configuration.loginAttemptsPerAddress)
    }

    func shutdown() async {
        await users.passwordWork.shutdown()
    }
}
