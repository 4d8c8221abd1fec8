// Accounts, assembled: local users and their password work, identity providers, browser sessions, the sign-in
// throttle, and the sign-in and account pages.
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

extension AccountsAssembly {
    static let migrations = [
        UsersSchemaMigration.piece, BrowserSessionSchemaMigration.piece, LoginThrottleSchemaMigration.piece,
        ExternalIdentitySchemaMigration.piece, NewAccountSchemaMigration.piece,
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
