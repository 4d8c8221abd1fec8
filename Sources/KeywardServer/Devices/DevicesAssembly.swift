// Devices, assembled: the app registry, challenges, registration with platform attestation, signed requests.
import AsyncHTTPClient
import Foundation
import Hummingbird
import KeywardAttestation
import ServiceLifecycle

public struct DevicesAssembly: KeywardPart {
    public let apps: DeviceAppService
    /// A person's devices, listed once with what the other parts hold for each.
    public let people: PersonDevices
    let service: DeviceService
    /// The browser helpers (session, forms, CSRF) of the account page's device rows.
    private let browser: BrowserRequests
    let store: any DeviceStore
    /// Calls Google's Play Integrity API, when a service account is configured; closed at shutdown.
    private let googleClient: HTTPClient?
    let declaredApps: [DeviceAppService.Registration]
    /// Google's attestation status list, when configured: `revocationListReloader` re-reads it when it changes.
    let revocationList: RevocationListFile?
    /// How long a pending device waits for a decision (`devices.pendingLifetimeDays`).
    private let pendingLifetime: TimeInterval
    private let clock: any KeywardClock
    private let realms: RealmService
    private let maxBodySize: Int
    private let clients: ClientNetworks

    init(_ core: CoreServices, oauth: OAuthAssembly, accounts: AccountsAssembly, settings: DeviceSettings) {
        (realms, maxBodySize, clients) = (oauth.realms, core.settings.maxBodySize, core.settings.clients)
        browser = accounts.browser
        let store = SQLDeviceStore(database: core.database)
        self.store = store
        declaredApps = settings.declaredApps
        pendingLifetime = settings.limits.pendingLifetime
        clock = core.clock
        apps = DeviceAppService(store: store, masterKey: core.masterKey, audit: core.audit, clock: core.clock, deviceKeys: core.deviceKeys)
        var verifier = PlatformAttestationVerifier(
            androidRoots: settings.androidRoots, androidRevocations: settings.androidRevocations,
            missingRevocationList: MissingRevocationListWarning(logger: core.logger), masterKey: core.masterKey
        )
        revocationList = settings.androidRevocations
        if let account = settings.playIntegrityAccount {
            // Its own client: no redirects, so the bearer token never follows an answer to another host.
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: .init(redirectConfiguration: .disallow))
            let tokens = GoogleAccessTokenSource(account: account, scope: GoogleAccessTokenSource.playIntegrity, httpClient: client, clock: { core.clock.now() })
            let endpoint = settings.playIntegrityURL
            verifier.googlePlayIntegrity = { (package: String) throws(AttestationFailure) -> any PlayIntegrityDecoder in
                try GooglePlayIntegrityDecoder(packageName: package, endpoint: endpoint, httpClient: client, accessToken: { try await tokens.token() })
            }
            googleClient = client
        } else {
            googleClient = nil
        }
        service = DeviceService(
            store: store, singleUse: core.singleUse, challengeKey: core.masterKey.derivedKey(purpose: DeviceChallenge.keyPurpose),
            attestations: verifier, audit: core.audit, metrics: core.metrics, clock: core.clock, challengeLifetime: settings.challengeLifetime,
            limits: settings.limits, deviceKeys: core.deviceKeys, logger: core.logger
        )
        core.deviceKeys.plug(DeviceKeyLookup(store: store))
        people = PersonDevices(apps: apps, deviceKeys: core.deviceKeys)
        accounts.plugins.add(disableStep: PersonDevicesRemoval(apps: apps))
        accounts.plugins.add(accountSection: PersonDevicesSection(people: people))
    }

    /// The device API under `/realms/{realm}/v1/device/`.
    func registerRoutes(on router: Router<KeywardRequestContext>, web: PageSurface) {
        DeviceRoutes(service: service, realms: realms, maxBodySize: maxBodySize, clients: clients).register(on: router)
        PersonDevicePages(apps: apps, browser: browser, renderer: web.renderer, clock: clock).register(on: web.pages)
    }

    /// Checks the revocation list file for a change every minute; nil when none is configured.
    func revocationListReloader(clock: any KeywardClock) -> RevocationListReloader? {
        revocationList.map { RevocationListReloader(file: $0, clock: clock, interval: .seconds(60)) }
    }

    func shutdown() async {
        try? await googleClient?.shutdown()
    }
}

extension DevicesAssembly {
    static let migrations = [DeviceSchemaMigration.piece, DeviceAttestedSchemaMigration.piece, DevicePersonSchemaMigration.piece]

    var sweeps: [ExpiredRowSweep] { [.pendingDevices(store, lifetime: pendingLifetime)] }

    /// The revocation list reloader, when a list is configured.
    var backgroundServices: [any Service] { revocationListReloader(clock: clock).map { [$0] } ?? [] }
}

extension ExpiredRowSweep {
    /// Pending devices nobody decided on within `lifetime`.
    static func pendingDevices(_ store: any DeviceStore, lifetime: TimeInterval) -> ExpiredRowSweep {
        ExpiredRowSweep("pendingDevices") { now in try await store.deletePendingDevices(registeredBefore: now.addingTimeInterval(-lifetime)) }
    }
}
