// Keyward's assembly: the core services and each part built from them, the router, and the background
// services. `keyward serve`, the admin commands and the tests all build it the same way.
import Foundation
import Hummingbird
import KeywardJOSE
import Logging
import ServiceLifecycle

/// A running Keyward: the core every part shares, and the parts (`KeywardPart`), each assembled in its own folder
/// from Core and the services of the parts it needs, in dependency order.
public final class KeywardRuntime: Sendable {
    /// Every part, in dependency order: what declares the schema. A new part adds its line here and its
    /// construction in `init`.
    static let partTypes: [any KeywardPart.Type] = [
        OAuthAssembly.self, AccountsAssembly.self, PushMFAAssembly.self, HostTokensAssembly.self, IdentityProvidersAssembly.self,
        DevicesAssembly.self, OpenIDAssembly.self, BrokerAssembly.self, PasskeysAssembly.self, AdminAssembly.self, SCIMAssembly.self,
    ]

    /// Every migration, assembled from Core's pieces and the parts'.
    static let schemaMigrations = SchemaMigration.assemble(CoreServices.migrations + partTypes.flatMap { $0.migrations })

    /// The parts as built, in the same order.
    var parts: [any KeywardPart] { [oauth, accounts, pushMFA, hostTokens, identityProviders, devices, openID, broker, passkeys, admin, scim] }

    public let configuration: KeywardConfiguration
    public let database: KeywardDatabase
    public let clock: any KeywardClock
    public let metrics: KeywardMetrics
    public let audit: AuditLog
    /// Core's single-use records (`SingleUseStore`), shared by every part.
    public let singleUse: any SingleUseStore
    public let oauth: OAuthAssembly
    public let accounts: AccountsAssembly
    public let pushMFA: PushMFAAssembly
    public let hostTokens: HostTokensAssembly
    let identityProviders: IdentityProvidersAssembly
    public let devices: DevicesAssembly
    let openID: OpenIDAssembly
    public let broker: BrokerAssembly
    public let passkeys: PasskeysAssembly
    let admin: AdminAssembly
    public let scim: SCIMAssembly
    let pageRenderer: PageRenderer
    private let core: CoreServices
    let pushSenders: [any PushSender]
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
        let masterKey = try MasterKey.resolve(configuration: configuration, database: databaseConfiguration)
        let database = try await KeywardDatabase.open(databaseConfiguration, synchronous: configuration.sqliteSynchronous, logger: logger)
        do {
            let applied = try await Migrator(database: database, logger: logger, migrations: SchemaMigration.all).migrate()
            if !applied.isEmpty { logger.info("applied migrations", metadata: ["versions": "\(applied)"]) }
            return KeywardRuntime(
                configuration: configuration, database: database, masterKey: masterKey, clock: clock, logger: logger,
                pageRenderer: try PageRenderer(), pushSenders: try PushSenders.configured(
                    fcm: configuration.fcmSettings, apns: configuration.apnsSettings, proxyEnvironment: configuration.proxyEnvironment, logger: logger, clock: clock
                ),
                deviceSettings: try DeviceSettings(configuration.declaredDeviceSettings, logger: logger)
            )
        } catch {
            try? await database.close()
            throw error
        }
    }

    private init(
        configuration: KeywardConfiguration, database: KeywardDatabase, masterKey: MasterKey, clock: any KeywardClock, logger: Logger,
        pageRenderer: PageRenderer, pushSenders: [any PushSender], deviceSettings: DeviceSettings
    ) {
        self.pageRenderer = pageRenderer
        self.pushSenders = pushSenders
        self.configuration = configuration
        self.database = database
        self.clock = clock
        self.logger = logger
        let core = CoreServices.build(settings: configuration.sharedSettings, database: database, masterKey: masterKey, clock: clock, logger: logger)
        self.core = core
        (metrics, audit, singleUse) = (core.metrics, core.audit, core.singleUse)
        oauth = OAuthAssembly(core, settings: configuration.oauthSettings)
        accounts = AccountsAssembly(core, oauth: oauth, settings: configuration.accountsSettings)
        pushMFA = PushMFAAssembly(core, oauth: oauth, accounts: accounts, senders: pushSenders, settings: configuration.pushMFASettings)
        hostTokens = HostTokensAssembly(core, oauth: oauth, accounts: accounts)
        identityProviders = IdentityProvidersAssembly(core, accounts: accounts, oauth: oauth, settings: configuration.identityProviderSettings)
        devices = DevicesAssembly(core, oauth: oauth, accounts: accounts, settings: deviceSettings)
        openID = OpenIDAssembly(core, oauth: oauth, accounts: accounts)
        broker = BrokerAssembly(core, oauth: oauth, accounts: accounts, openID: openID, relaysPerPersonPerMinute: configuration.relaysPerPersonPerMinute)
        passkeys = PasskeysAssembly(core, oauth: oauth, accounts: accounts, devices: devices)
        admin = AdminAssembly(core, oauth: oauth, accounts: accounts, hostTokens: hostTokens, devices: devices, pushMFA: pushMFA, passkeys: passkeys)
        scim = SCIMAssembly(core, oauth: oauth, accounts: accounts, admin: admin)
    }

    /// Deletes a user and what is theirs (`keyward users delete`).
    public func deleteUser(realm: String, username: String) async throws -> User {
        try await accounts.removal.delete(realm: realm, username: username)
    }

    /// Adds or updates the apps of `devices.appsFile` (see `DeviceAppsFile`); answers what happened to each.
    public func applyDeclaredApps() async throws -> [(appId: String, outcome: DeviceAppService.Declared)] {
        var outcomes: [(appId: String, outcome: DeviceAppService.Declared)] = []
        for registration in devices.declaredApps {
            do {
                outcomes.append((registration.appId, try await devices.apps.declare(registration)))
            } catch let error as DeviceAppError {
                throw ConfigurationError(setting: DeviceAppsFile.setting, problem: "app '\(registration.appId)' in realm '\(registration.realm)': \(error.description)")
            }
        }
        return outcomes
    }

    public func seedDemo() async throws -> DemoSeed {
        try await DemoSeed.apply(realms: oauth.realms, clients: oauth.clients, users: accounts.users)
    }

    /// The operational routes, then every part's API and pages; the pages in a group of their own, whose errors are
    /// HTML pages with the request id where the JSON APIs keep `ErrorMiddleware`'s bodies.
    public func makeRouter() -> Router<KeywardRequestContext> {
        let router = Router(context: KeywardRequestContext.self)
        router.add(middleware: ObservabilityMiddleware(metrics: metrics))
        router.add(middleware: ErrorMiddleware())
        OperationsRoutes(metrics: metrics, checkDatabase: { [database] in try await database.ping(timeout: .seconds(2)) }).register(on: router)
        router.get(RouterPath(StaticScript.path)) { _, _ in PageRenderer.scriptResponse() }
        let web = PageSurface(
            pages: router.group().add(middleware: PageErrorMiddleware(renderer: pageRenderer)).add(middleware: oauth.realmResolution),
            renderer: pageRenderer
        )
        for part in parts { part.registerRoutes(on: router, web: web) }
        // Last, so that it wraps only the router's not-found answer.
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes.map { ("\($0.path)", $0.method) }))
        return router
    }

    /// Deletes what has expired, every `sweep.interval`: Core's rows and every part's.
    var sweeper: ExpiredRowSweeper {
        ExpiredRowSweeper(
            sweeps: core.sweeps + parts.flatMap(\.sweeps), clock: clock, interval: .seconds(configuration.sweepInterval), logger: logger
        )
    }

    /// The expired-row sweeper and every part's background services (a service that returns ends the whole group).
    var backgroundServices: [any Service] {
        [sweeper] + parts.flatMap(\.backgroundServices)
    }

    /// The HTTP application plus background services (the expired-row sweeper, the challenge listener).
    public func makeApplication(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        return Application(
            router: makeRouter(),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "keyward"),
            services: backgroundServices,
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    public func shutdown() async throws {
        for sender in pushSenders { await sender.shutdown() }
        for part in parts { await part.shutdown() }
        try await database.close()
    }
}
