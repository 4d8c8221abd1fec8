// Sign-in for apps, assembled: the authorization endpoint and its pages, authorization codes, refresh-token
// families, id_tokens, and the two grants it adds to the OAuth core's token endpoint.
import Foundation
import Hummingbird

/// Keyward as an OpenID Provider for apps (issue 28): built from the OAuth core (clients, realms, the token
/// endpoint's grant registry, signing keys) and Accounts (browser sessions, the one login flow).
struct OpenIDAssembly: KeywardPart {
    let families: any RefreshFamilyStore
    let refresh: RefreshTokens
    /// Where the broker plugs in its relay.
    let relays = RelayAuthorizations()
    private let service: AuthorizationService
    private let pending: PendingAuthorizations
    private let accounts: AccountsAssembly
    private let oauth: OAuthAssembly
    private let clientAuthentication: ClientAuthentication
    private let realmResolution: RealmResolution
    private let maxBodySize: Int
    private let accessTokens: AccessTokenIssuer
    /// The userinfo endpoint's gate: DPoP for bound tokens, Bearer for the tokens of apps that send no proof.
    private let userInfoGate: DPoPResourceGuard
    private let publicURL: String
    private let clock: any KeywardClock

    init(_ core: CoreServices, oauth: OAuthAssembly, accounts: AccountsAssembly) {
        self.accounts = accounts
        self.oauth = oauth
        families = SQLRefreshFamilyStore(database: core.database)
        refresh = RefreshTokens(
            store: families, key: core.masterKey.derivedKey(purpose: RefreshToken.keyPurpose), users: accounts.users, audit: core.audit,
            logger: core.logger, writer: core.database.writerExecutor
        )
        let codes = SealedJSON(masterKey: core.masterKey, purpose: "keyward authorization code v1")
        service = AuthorizationService(
            clients: oauth.clients, realms: oauth.realms, codes: codes,
            pushedRequests: SealedJSON(masterKey: core.masterKey, purpose: "keyward pushed authorization request v1"), singleUse: core.singleUse,
            clock: core.clock, relays: relays
        )
        clientAuthentication = ClientAuthentication(clients: oauth.clients)
        (realmResolution, maxBodySize) = (oauth.realmResolution, core.settings.maxBodySize)
        (accessTokens, publicURL, clock) = (oauth.accessTokens, core.settings.publicURL, core.clock)
        var userInfoPolicy = oauth.resourceGuard.policy
        userInfoPolicy.scheme = .dpopOrUnboundBearer
        userInfoGate = oauth.gate(userInfoPolicy)
        pending = PendingAuthorizations(
            sealed: SealedJSON(masterKey: core.masterKey, purpose: PendingAuthorizations.purpose), secureCookies: accounts.browser.secureCookies,
            clock: core.clock
        )
        let idTokens = IDTokenIssuer(realms: oauth.realms, keys: oauth.keys)
        oauth.grants.add(AuthorizationCodeGrant(codes: codes, users: accounts.users, refresh: refresh, idTokens: idTokens))
        oauth.grants.add(RefreshTokenGrant(refresh: refresh))
        oauth.endpoints.add(.authorization)
        oauth.endpoints.add(.pushedAuthorizationRequest)
        oauth.endpoints.add(.userinfo)
        oauth.endpoints.add(.revocation)
        oauth.endpoints.add(.endSession)
        accounts.plugins.add(continuation: pending)
        accounts.plugins.plug(appSessions: AppSessions(store: families, clock: core.clock, logger: core.logger))
        core.deviceKeys.add(removalStep: DeviceRefreshRevocation(families: families, audit: core.audit))
        core.deviceKeys.add(rotationStep: DeviceRefreshRebinding(families: families))
        core.deviceKeys.add(holdingsReporter: DeviceAppSessionHoldings(families: families, clock: core.clock))
    }

    func registerRoutes(on router: Router<KeywardRequestContext>, web: PageSurface) {
        AuthorizationPages(
            service: service, pending: pending, browser: accounts.browser, users: accounts.users, secondFactor: accounts.plugins.secondFactor,
            renderer: web.renderer
        )
            .register(on: web.pages)
        LogoutPages(
            clients: oauth.clients, realms: oauth.realms, keys: oauth.keys, browser: accounts.browser, refresh: refresh, renderer: web.renderer,
            clock: clock
        )
            .register(on: web.pages)
        PushedAuthorizationRoutes(service: service, clients: clientAuthentication, realmResolution: realmResolution, maxBodySize: maxBodySize)
            .register(on: router)
        AppSessionRoutes(
            refresh: refresh, users: accounts.users, accessTokens: accessTokens, clients: clientAuthentication, realmResolution: realmResolution,
            authentication: DPoPAuthentication(gate: userInfoGate, publicURL: publicURL), clock: clock, maxBodySize: maxBodySize
        ).register(on: router)
    }
}

extension OpenIDAssembly {
    static let migrations = [RefreshFamilySchemaMigration.piece]

    var sweeps: [ExpiredRowSweep] { [.refreshFamilies(families)] }
}

extension ExpiredRowSweep {
    /// Refresh-token families past their lifetime, revoked or not.
    static func refreshFamilies(_ store: any RefreshFamilyStore) -> ExpiredRowSweep {
        ExpiredRowSweep("refreshFamilies") { now in try await store.deleteExpired(now: now) }
    }
}
