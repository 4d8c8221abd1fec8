import Foundation
import Hummingbird
import KeywardJOSE
import Logging
import ServiceLifecycle

/// Everything a running Keyward needs, wired once: database, stores, services, metrics.
/// `keyward serve`, the admin commands and the tests all build it the same way.
public final class KeywardRuntime: Sendable {
    public let configuration: KeywardConfiguration
    public let database: KeywardDatabase
    public let clock: any KeywardClock
    public let metrics: KeywardMetrics
    public let realms: RealmService
    public let keys: RealmKeyService
    public let clients: ClientService
    public let users: UserService
    public let tokens: TokenService
    public let resourceGuard: DPoPResourceGuard
    public let pushMFA: PushMFAService
    public let audit: AuditLog
    public let browserSessions: BrowserSessionService
    public let loginThrottle: LoginThrottle
    let challengeSignals: ChallengeSignals
    let browserSessionStore: any BrowserSessionStore
    let loginAttemptStore: any LoginAttemptStore
    let pageRenderer: PageRenderer
    let pushSenders: [any PushSender]
    let challengeStore: any PushChallengeStore
    let accessTokens: AccessTokenIssuer
    let replayStore: any ReplayStore
    let signingKeyStore: any SigningKeyStore
    let logger: Logger

    /// Opens the database, applies pending migrations and unlocks the master key.
    public static func start(configuration: KeywardConfiguration, logger: Logger, clock: any KeywardClock = SystemClock()) async throws -> KeywardRuntime {
        try configuration.validate()
        let databaseConfiguration: DatabaseConfiguration
        do {
            databaseConfiguration = try DatabaseConfiguration(url: configuration.resolvedDatabaseURL)
        } catch let error as DatabaseConfigurationError {
            throw ConfigurationError(setting: "databaseURL", problem: error.description)
        }
        if let warning = databaseConfiguration.transportWarning { logger.warning("\(warning)", metadata: ["setting": "databaseURL"]) }
        let masterKey = try MasterKey.resolve(configuration: configuration, embedded: databaseConfiguration.isEmbedded)
        let database = try await KeywardDatabase.open(databaseConfiguration, logger: logger)
        do {
            let applied = try await Migrator(database: database, logger: logger).migrate()
            if !applied.isEmpty { logger.info("applied migrations", metadata: ["versions": "\(applied)"]) }
            return KeywardRuntime(
                configuration: configuration, database: database, masterKey: masterKey, clock: clock, logger: logger,
                pageRenderer: try PageRenderer(), pushSenders: try pushSenders(configuration, logger: logger, clock: clock)
            )
        } catch {
            try? await database.close()
            throw error
        }
    }

    private init(
        configuration: KeywardConfiguration, database: KeywardDatabase, masterKey: MasterKey, clock: any KeywardClock, logger: Logger,
        pageRenderer: PageRenderer, pushSenders: [any PushSender]
    ) {
        self.pageRenderer = pageRenderer
        self.pushSenders = pushSenders
        self.configuration = configuration
        self.database = database
        self.clock = clock
        self.logger = logger
        let metrics = KeywardMetrics()
        self.metrics = metrics
        let stores = SQLStores(database: database)
        replayStore = stores.replay
        signingKeyStore = stores.signingKeys
        keys = RealmKeyService(store: stores.signingKeys, masterKey: masterKey, clock: clock)
        realms = RealmService(store: stores.realms, keys: keys, clock: clock, publicURL: configuration.resolvedPublicURL)
        clients = ClientService(store: stores.clients, clock: clock)
        let browserSessionStore = SQLBrowserSessionStore(database: database)
        self.browserSessionStore = browserSessionStore
        let audit = AuditLog(store: SQLAuditStore(database: database), clock: clock, logger: logger, metrics: metrics)
        self.audit = audit
        users = UserService(
            store: stores.users, sessions: browserSessionStore, audit: audit, clock: clock,
            passwordKey: masterKey.derivedKey(purpose: PasswordHasher.keyPurpose), bcryptCost: UInt8(configuration.bcryptCost),
            passwordWork: PasswordWork(
                threads: configuration.passwordThreads, maxInFlight: configuration.maxConcurrentPasswordChecks,
                record: { [metrics] ran in metrics.passwordChecked(ran: ran) }
            )
        )
        accessTokens = AccessTokenIssuer(realms: realms, keys: keys)
        tokens = TokenService(
            realms: realms, clients: clients, issuer: accessTokens, replayStore: stores.replay,
            dpopOptions: Self.dpopOptions(maxAge: configuration.dpopTokenEndpointMaxAge, futureSkew: configuration.dpopTokenEndpointFutureSkew),
            nonces: configuration.dpopRequireNonce ? DPoPNonces(masterKey: masterKey) : nil,
            clock: clock, metrics: metrics
        )
        resourceGuard = DPoPResourceGuard(
            issuer: accessTokens, replayStore: stores.replay,
            options: .init(proof: Self.dpopOptions(maxAge: configuration.dpopMaxAge, futureSkew: configuration.dpopFutureSkew)),
            clock: clock, metrics: metrics
        )
        browserSessions = BrowserSessionService(
            store: browserSessionStore, clock: clock, preLoginKey: masterKey.derivedKey(purpose: PreLoginState.keyPurpose)
        )
        loginAttemptStore = SQLLoginAttemptStore(database: database)
        loginThrottle = LoginThrottle(store: loginAttemptStore, clock: clock, maxAttemptsPerAddress: configuration.loginAttemptsPerAddress)
        let signals = ChallengeSignals()
        challengeSignals = signals
        let pushCredentials = SQLPushCredentialStore(database: database)
        challengeStore = SQLPushChallengeStore(database: database)
        pushMFA = PushMFAService(
            realms: realms, users: users, credentials: pushCredentials, challenges: challengeStore,
            state: SQLPushMFAStateStore(database: database), tokens: PushMFATokens(realms: realms, keys: keys),
            authenticator: DeviceAuthenticator(
                gate: DPoPResourceGuard(
                    issuer: accessTokens, replayStore: stores.replay,
                    options: DeviceAuthenticator.gateOptions(
                        requireAth: configuration.pushMfaRequireAth, iatTolerance: TimeInterval(configuration.pushMfaDpopIatTolerance),
                        jtiLifetime: TimeInterval(configuration.pushMfaDpopJtiTTL)
                    ),
                    clock: clock, metrics: metrics
                ),
                credentials: pushCredentials, clock: clock, audit: audit, metrics: metrics, refusalAudit: RefusalAuditSampler()
            ),
            pusher: DispatchingChallengePusher(dispatcher: PushDispatcher(senders: pushSenders, logger: logger) { [metrics] type, outcome in
                metrics.pushDelivered(providerType: type, outcome: outcome.rawValue)
            }),
            pushTasks: BoundedTasks(
                maxRunning: configuration.pushMaxConcurrentSends, maxWaiting: 16 * configuration.pushMaxConcurrentSends,
                onDrop: { [metrics] in metrics.pushDropped() }
            ),
            signals: signals, audit: audit, clock: clock, logger: logger
        )
    }

    static func dpopOptions(maxAge: Int, futureSkew: Int) -> DPoPVerifier.Options {
        var options = DPoPVerifier.Options()
        options.maxAge = TimeInterval(maxAge)
        options.maxFutureSkew = TimeInterval(futureSkew)
        options.replayLifetime = TimeInterval(maxAge + futureSkew)
        return options
    }

    public func seedDemo() async throws -> DemoSeed {
        try await DemoSeed.apply(realms: realms, clients: clients, users: users)
    }

    public func makeRouter() -> Router<KeywardRequestContext> {
        let router = Router(context: KeywardRequestContext.self)
        router.add(middleware: ObservabilityMiddleware(metrics: metrics))
        router.add(middleware: ErrorMiddleware())
        OperationsRoutes(metrics: metrics, checkDatabase: { [database] in try await database.ping() }).register(on: router)
        OAuthRoutes(
            realms: realms, keys: keys, tokens: tokens, guardian: resourceGuard,
            publicURL: configuration.resolvedPublicURL, maxBodySize: configuration.maxBodySize
        ).register(on: router)
        PushMFARoutes(
            service: pushMFA,
            events: ChallengeEventStream(service: pushMFA, signals: challengeSignals, metrics: metrics, options: .init(
                maxConnections: configuration.sseMaxConnections, heartbeat: .seconds(configuration.sseHeartbeatSeconds),
                maxLifetime: .seconds(configuration.sseMaxConnectionLifetimeSeconds), reconnectDelayMillis: configuration.sseReconnectDelayMillis,
                pollInterval: .milliseconds(configuration.ssePollMillis)
            )),
            publicURL: configuration.resolvedPublicURL, maxBodySize: configuration.maxBodySize, renderer: pageRenderer
        ).register(on: router)
        let browser = BrowserRequests(
            sessions: browserSessions, secureCookies: configuration.resolvedPublicURL.lowercased().hasPrefix("https://"),
            maxBodySize: configuration.maxBodySize, trustedProxies: configuration.trustedProxies
        )
        // Pages answer errors with an HTML page and the request id; the JSON APIs above keep ErrorMiddleware's bodies.
        let pages = router.group().add(middleware: PageErrorMiddleware(renderer: pageRenderer))
        LoginPages(renderer: pageRenderer, browser: browser, realms: realms, users: users, pushMFA: pushMFA, throttle: loginThrottle).register(on: pages)
        PushPages(renderer: pageRenderer, browser: browser, realms: realms, users: users, pushMFA: pushMFA, throttle: loginThrottle).register(on: pages)
        return router
    }

    /// Deletes what has expired, every `sweep.interval`.
    var sweeper: ExpiredRowSweeper {
        ExpiredRowSweeper(
            replayStore: replayStore, signingKeyStore: signingKeyStore, challengeStore: challengeStore,
            browserSessionStore: browserSessionStore, loginAttemptStore: loginAttemptStore, auditStore: audit.store,
            auditRetention: TimeInterval(configuration.auditRetentionDays) * 86400, clock: clock,
            interval: .seconds(configuration.sweepInterval), logger: logger
        )
    }

    /// The HTTP application plus background services (the expired-row sweeper).
    /// Wakes this node's SSE streams when another node changes a challenge (PostgreSQL only).
    var challengeListener: ChallengeNotificationListener {
        ChallengeNotificationListener(database: database, signals: challengeSignals, logger: logger)
    }

    public func makeApplication(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        return Application(
            router: makeRouter(),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "keyward"),
            // A service that returns ends the whole group, so the listener runs only where there is something to listen to.
            services: database.isShared ? [sweeper, challengeListener] : [sweeper],
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// `log` and `none` always; `fcm` and `apns` when configured. Their key files are read here, so a bad
    /// configuration stops start-up with the setting's name instead of failing at the first login.
    private static func pushSenders(_ configuration: KeywardConfiguration, logger: Logger, clock: any KeywardClock) throws -> [any PushSender] {
        var senders: [any PushSender] = [LogPushSender(logger: logger), NonePushSender()]
        do throws(PushConfigurationError) {
            let environment = configuration.proxyEnvironment
            if var fcm = configuration.fcmSettings {
                fcm.proxy = try OutboundProxy.fromEnvironment(for: fcm.url, setting: "push.fcm.url", environment: environment)
                senders.append(try FCMPushSender(settings: fcm, logger: logger, clock: { clock.now() }))
            }
            if var apns = configuration.apnsSettings {
                apns.proxy = try OutboundProxy.fromEnvironment(for: apns.url, setting: "push.apns.url", environment: environment)
                senders.append(try APNsPushSender(settings: apns, logger: logger, clock: { clock.now() }))
            }
        } catch {
            // The APNs sender is built last and its init creates no client when it throws: nothing to shut down.
            throw ConfigurationError(
                setting: error.setting, problem: error.file.map { "\($0): \(error.problem)" } ?? error.problem,
                environmentVariable: error.environmentVariable
            )
        }
        return senders
    }

    public func shutdown() async throws {
        for sender in pushSenders { await sender.shutdown() }
        await users.passwordWork.shutdown()
        try await database.close()
    }
}
