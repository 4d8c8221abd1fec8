// SCIM 2.0 (RFC 7643 / 7644), assembled: a directory provisions a realm's users under `/scim/v2/realms/{realm}`.
import Hummingbird

/// SCIM for a realm's directory (issue 33): its bearer tokens (the `scim_tokens` table) and its routes, each behind
/// `SCIMErrorMiddleware` (RFC 7644 §3.12 bodies) and `SCIMAuthentication`. Users are Accounts' users, changed
/// through `UserService` as the CLI and the admin API change them.
public struct SCIMAssembly: KeywardPart {
    static let migrations = [SCIMTokenSchemaMigration.piece, SCIMGroupSchemaMigration.piece]

    public let tokens: SCIMTokenService
    private let oauth: OAuthAssembly
    private let admin: AdminAssembly
    private let core: CoreServices

    private let accounts: AccountsAssembly

    init(_ core: CoreServices, oauth: OAuthAssembly, accounts: AccountsAssembly, admin: AdminAssembly) {
        (self.core, self.oauth, self.accounts, self.admin) = (core, oauth, accounts, admin)
        tokens = SCIMTokenService(store: SQLSCIMTokenStore(database: core.database), audit: core.audit, clock: core.clock)
    }

    func registerRoutes(on router: Router<KeywardRequestContext>, web: PageSurface) {
        let authentication = SCIMAuthentication(tokens: tokens, admin: admin.authentication)
        let realm = router.group("/scim/v2/realms/:realm").add(middleware: SCIMErrorMiddleware()).add(middleware: oauth.realmResolution)
            .add(middleware: authentication)
        SCIMDiscoveryRoutes(publicURL: core.settings.publicURL).register(on: realm)
        let users = SCIMUserService(users: accounts.users, removal: accounts.removal, publicURL: core.settings.publicURL)
        SCIMUserRoutes(service: users, maxBodySize: core.settings.maxBodySize).register(on: realm)
        let groups = SCIMGroupService(
            store: SQLSCIMGroupStore(database: core.database), users: accounts.users, clock: core.clock, publicURL: core.settings.publicURL
        )
        SCIMGroupRoutes(service: groups, maxBodySize: core.settings.maxBodySize).register(on: realm)
        SCIMSearchRoutes(users: users, groups: groups, maxBodySize: core.settings.maxBodySize).register(on: realm)
        router.add(middleware: SCIMUnmatchedPathMiddleware())
    }
}
