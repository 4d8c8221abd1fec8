// Sign-in for apps, assembled: the authorization endpoint and its pages, authorization codes, refresh-token
// families, id_tokens, and the two grants it adds to the OAuth core's token endpoint.
import Foundation
import Hummingbird

/// Keyward as an OpenID Provider for apps (issue 28): built from the OAuth core (clients, realms, the token
/// endpoint's grant registry, signing keys) and Accounts (browser sessions, the one login flow).
struct OpenIDAssembly: KeywardPart {
    let families: any RefreshFamilyStore
    let refresh: RefreshTokens
    private let service: AuthorizationService
    private let pending: PendingAuthorizations
    private let accounts: AccountsAssembly
    private let clientAuthentication: ClientAuthentication
    private let realmResolution: RealmResolution
    private let maxBodySize: Int

    init(_ core: CoreServices, oauth: OAuthAssembly, accounts: AccountsAssembly) {
        self.accounts = accounts
        families = SQLRefreshFamilyStore(database: core.database)
        refresh = RefreshTokens(
            store: families, key: core.masterKey.derivedKey(purpose: RefreshToken.keyPurpose), users: accounts.users, audit: core.audit,
            logger: core.logger
        )
        let codes = SealedJSON(masterKey: core.masterKey, purpose: "keyward authorization code v1")
        service = AuthorizationService(
            clients: oauth.clients, realms: oauth.realms, codes: codes,
            pushedRequests: SealedJSON(masterKey: core.masterKey, purpose: "keyward pushed authorization request v1"), singleUse: core.singleUse,
            clock: core.clock
        )
        clientAuthentication = ClientAuthentication(clients: oauth.clients)
        (realmResolution, maxBodySize) = (oauth.realmResolution, core.settings.maxBodySize)
        pending = PendingAuthorizations(
            sealed: SealedJSON(masterKey: core.masterKey, purpose: PendingAuthorizations.purpose), secureCookies: accounts.browser.secureCookies,
            clock: core.clock
        )
        let idTokens = IDTokenIssuer(realms: oauth.realms, keys: oauth.keys)
        oauth.grants.add(AuthorizationCodeGrant(codes: codes, users: accounts.users, refresh: refresh, idTokens: idTokens))
        oauth.grants.add(RefreshTokenGrant(refresh: refresh))
        oauth.endpoints.add(.authorization)
        oauth.endpoints.add(.pushedAuthorizationRequest)
        accounts.plugins.add(continuation: pending)
    }

    func registerRoutes(on router: Router<KeywardRequestContext>, web: PageSurface) {
        AuthorizationPages(service: service, pending: pending, browser: accounts.browser, users: accounts.users, renderer: web.renderer)
            .register(on: web.pages)
        PushedAuthorizationRoutes(service: service, clients: clientAuthentication, realmResolution: realmResolution, maxBodySize: maxBodySize)
            .register(on: router)
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
