// Push MFA, assembled from the OAuth core (realms, keys, the DPoP gate), Accounts (users) and the push senders:
// its service, the challenge signals, and its device API, event streams and pages.
import Foundation
import Hummingbird
import ServiceLifecycle

public struct PushMFAAssembly: KeywardPart {
    public let service: PushMFAService
    let signals: ChallengeSignals
    let challengeStore: any PushChallengeStore
    private let core: CoreServices
    private let realms: RealmService
    private let users: UserService
    private let throttle: LoginThrottle
    private let browser: BrowserRequests
    private let settings: PushMFAServerSettings
    /// The OAuth core's gate, in front of enabling push on a registered device with the person's token.
    private let resourceGuard: DPoPResourceGuard

    /// Plugs push approval into Accounts' login flow as its second factor, and the user's phones into its removal.
    init(_ core: CoreServices, oauth: OAuthAssembly, accounts: AccountsAssembly, senders: [any PushSender], settings: PushMFAServerSettings) {
        self.core = core
        self.settings = settings
        (realms, users, throttle, browser) = (oauth.realms, accounts.users, accounts.loginThrottle, accounts.browser)
        resourceGuard = oauth.resourceGuard
        let metrics = core.metrics
        signals = ChallengeSignals()
        challengeStore = SQLPushChallengeStore(database: core.database)
        let credentials = SQLPushCredentialStore(database: core.database)
        service = PushMFAService(
            realms: oauth.realms, users: accounts.users, credentials: credentials, challenges: challengeStore,
            state: SQLPushMFAStateStore(database: core.database), tokens: PushMFATokens(realms: oauth.realms, keys: oauth.keys),
            authenticator: DeviceAuthenticator(
                gate: oauth.gate(DeviceAuthenticator.gatePolicy(
                    requireAth: settings.requireAth, iatTolerance: TimeInterval(settings.dpopIatTolerance),
                    jtiLifetime: TimeInterval(settings.dpopJtiTTL)
                )),
                credentials: credentials, users: accounts.users, clock: core.clock, audit: core.audit, deviceKeys: core.deviceKeys, metrics: metrics,
                refusalAudit: RefusalAuditSampler(), publicURL: core.settings.publicURL, maxBodySize: core.settings.maxBodySize
            ),
            pusher: DispatchingChallengePusher(dispatcher: PushDispatcher(senders: senders, logger: core.logger) { type, outcome in
                metrics.pushDelivered(providerType: type, outcome: outcome.rawValue)
            }),
            pushTasks: BoundedTasks(
                maxRunning: settings.maxConcurrentSends, maxWaiting: 16 * settings.maxConcurrentSends,
                onDrop: { metrics.pushDropped() }
            ),
            signals: signals, audit: core.audit, clock: core.clock, logger: core.logger, deviceKeys: core.deviceKeys
        )
        core.deviceKeys.add(removalStep: RegisteredDevicePushRemoval(credentials: credentials, audit: core.audit))
        core.deviceKeys.add(rotationStep: RegisteredDevicePushRekey(credentials: credentials))
        core.deviceKeys.add(holdingsReporter: RegisteredDevicePushHoldings(credentials: credentials))
        accounts.plugins.add(disableStep: RegisteredDevicePushDisable(credentials: credentials, audit: core.audit))
        accounts.plugins.plug(secondFactor: factor)
        accounts.plugins.add(removalStep: factor)
    }

    /// The device API and the challenge event streams (JSON errors), the push step's and the enrollment's pages.
    func registerRoutes(on router: Router<KeywardRequestContext>, web: PageSurface) {
        registerAPI(on: router, renderer: web.renderer)
        PushPages(renderer: web.renderer, browser: browser, users: users, pushMFA: service, throttle: throttle, clock: core.clock)
            .register(on: web.pages)
    }

    private func registerAPI(on router: Router<KeywardRequestContext>, renderer: PageRenderer) {
        PushMFARoutes(
            service: service,
            events: ChallengeEventStream(service: service, signals: signals, metrics: core.metrics, options: settings.events),
            realmResolution: RealmResolution(realms: realms), maxBodySize: core.settings.maxBodySize, renderer: renderer
        ).register(on: router)
        RegisteredDevicePushRoutes(
            service: service, users: users, deviceKeys: core.deviceKeys, realmResolution: RealmResolution(realms: realms),
            authentication: DPoPAuthentication(gate: resourceGuard, publicURL: core.settings.publicURL), maxBodySize: core.settings.maxBodySize
        ).register(on: router)
    }

    /// Push approval as the login flow's second factor.
    var factor: PushSecondFactor { PushSecondFactor(service: service) }

    /// Wakes this node's event streams when another node changes a challenge (PostgreSQL only).
    var listener: ChallengeNotificationListener {
        ChallengeNotificationListener(database: core.database, signals: signals, logger: core.logger)
    }
}

extension PushMFAAssembly {
    static let migrations = [
        PushMFASchemaMigration.piece, ChallengeNotifySchemaMigration.piece, ChallengeNotifyStatusSchemaMigration.piece,
        LoginChallengeFunctionSchemaMigration.piece, RegisteredDevicePushSchemaMigration.piece,
    ]

    var sweeps: [ExpiredRowSweep] { [.pushChallenges(challengeStore)] }

    /// The challenge listener where there is something to listen to: other nodes on a shared database.
    var backgroundServices: [any Service] { core.database.isShared ? [listener] : [] }
}

extension ExpiredRowSweep {
    /// How long a finished challenge is kept (the browser acts on its outcome within seconds; the audit table
    /// keeps the history).
    static let finishedChallengeRetention: TimeInterval = 86400

    /// Push challenges past their expiry are marked EXPIRED, and finished ones are forgotten after a day.
    static func pushChallenges(_ store: any PushChallengeStore) -> ExpiredRowSweep {
        ExpiredRowSweep(counting: { now in
            let swept = try await store.sweepChallenges(now: now, deleteEndedBefore: now.addingTimeInterval(-finishedChallengeRetention))
            return ["expiredChallenges": swept.expired, "deletedChallenges": swept.deleted]
        })
    }
}
