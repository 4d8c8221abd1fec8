// The admin API, assembled: what the CLI manages, over HTTP, for clients holding admin scopes.
import Hummingbird

/// Administration over HTTP (issue 33): `/admin/realms/…`, each route behind `AdminProblemMiddleware` (RFC 9457
/// bodies) and `AdminAuthentication` (a DPoP-bound client_credentials token of the realm or the master realm, the
/// client's admin scopes). It owns no table: every route calls the service the CLI calls.
public struct AdminAssembly: KeywardPart {
    static let migrations: [SchemaMigration.Piece] = []

    private let oauth: OAuthAssembly
    private let accounts: AccountsAssembly
    private let hostTokens: HostTokensAssembly
    private let devices: DevicesAssembly
    private let pushMFA: PushMFAAssembly
    private let passkeys: PasskeysAssembly
    private let core: CoreServices
    /// The gate of every admin route, and of SCIM's routes for callers with a DPoP-bound token.
    let authentication: AdminAuthentication

    init(
        _ core: CoreServices, oauth: OAuthAssembly, accounts: AccountsAssembly, hostTokens: HostTokensAssembly, devices: DevicesAssembly,
        pushMFA: PushMFAAssembly, passkeys: PasskeysAssembly
    ) {
        (self.core, self.oauth, self.accounts, self.hostTokens, self.devices) = (core, oauth, accounts, hostTokens, devices)
        (self.pushMFA, self.passkeys) = (pushMFA, passkeys)
        authentication = AdminAuthentication(
            gate: oauth.resourceGuard, realms: oauth.realms, clients: oauth.clients, audit: core.audit, publicURL: core.settings.publicURL,
            clock: core.clock, refusals: RefusalAuditSampler()
        )
    }

    func registerRoutes(on router: Router<KeywardRequestContext>, web: PageSurface) {
        let maxBodySize = core.settings.maxBodySize
        let realmRoutes = AdminRealmRoutes(realms: oauth.realms, keys: oauth.keys, maxBodySize: maxBodySize)
        let top = router.group("/admin").add(middleware: AdminProblemMiddleware())
        realmRoutes.registerTop(on: top.group().add(middleware: authentication))
        let realm = top.group("realms/:realm").add(middleware: oauth.realmResolution).add(middleware: authentication)
        realmRoutes.register(on: realm)
        AdminClientRoutes(clients: oauth.clients, maxBodySize: maxBodySize).register(on: realm)
        AdminUserRoutes(
            users: accounts.users, sessions: accounts.browserSessions, removal: accounts.removal, audit: core.audit, maxBodySize: maxBodySize
        ).register(on: realm)
        AdminProviderRoutes(providers: accounts.providers, publicURL: core.settings.publicURL, maxBodySize: maxBodySize).register(on: realm)
        AdminIssuerRoutes(issuers: hostTokens.issuers, maxBodySize: maxBodySize).register(on: realm)
        AdminAppRoutes(apps: devices.apps, maxBodySize: maxBodySize).register(on: realm)
        AdminAuditRoutes(audit: core.audit).register(on: realm)
        AdminSettingsRoutes(pushMFA: pushMFA.service, passkeys: passkeys.settings, maxBodySize: maxBodySize).register(on: realm)
        AdminUserHoldingsRoutes(users: accounts.users, pushMFA: pushMFA.service, apps: devices.apps, passkeys: passkeys.service).register(on: realm)
    }
}
