// Sign-in with identity providers, assembled: discovery documents and JWK Sets fetched and cached, the code
// exchange's HTTP client, and the flow. The provider registry (its table, model, store and service) is Accounts':
// the sign-in page, the account page and unlinking's one atomic statement read it.
import Foundation
import Hummingbird

struct IdentityProvidersAssembly: KeywardPart {
    let signIn: ProviderSignIn
    let callbackLimiter: ProviderCallbackLimiter
    private let fetcher: HTTPDocumentFetcher
    private let tokens: ProviderTokenClient
    private let accounts: AccountsAssembly
    private let clock: any KeywardClock

    init(_ core: CoreServices, accounts: AccountsAssembly, oauth: OAuthAssembly, settings: IdentityProviderSettings) {
        fetcher = HTTPDocumentFetcher()
        tokens = ProviderTokenClient()
        (self.accounts, clock) = (accounts, core.clock)
        callbackLimiter = ProviderCallbackLimiter(limit: settings.callbackFailuresPerAddress)
        let appleSecrets = AppleClientSecrets(masterKey: core.masterKey, clock: core.clock)
        let appleRevocation = AppleTokenRevocation(providers: accounts.providers, appleSecrets: appleSecrets, tokens: tokens, audit: core.audit, logger: core.logger)
        signIn = ProviderSignIn(
            providers: accounts.providers, metadata: IdentityProviderMetadataCache(fetcher: fetcher, clock: core.clock, logger: core.logger),
            jwks: JWKSCache(fetcher: fetcher, clock: core.clock, logger: core.logger), tokens: tokens,
            appleSecrets: appleSecrets, users: accounts.users,
            singleUse: core.singleUse, keys: TransactionKeys(masterKey: core.masterKey), clock: core.clock,
            publicURL: core.settings.publicURL, audit: core.audit, logger: core.logger
        )
        accounts.plugins.add(removalStep: appleRevocation)
        accounts.plugins.add(unlinkStep: appleRevocation)
    }

    /// Sign-in and linking through a provider, and its callback, ending in Accounts' login flow.
    func registerRoutes(on router: Router<KeywardRequestContext>, web: PageSurface) {
        ProviderSignInRoutes(
            signIn: signIn, completion: accounts.signInCompletion, browser: accounts.browser, renderer: web.renderer, clock: clock,
            limiter: callbackLimiter
        ).register(on: web.pages)
    }

    func shutdown() async {
        await fetcher.shutdown()
        await tokens.shutdown()
    }
}

extension IdentityProvidersAssembly {
    /// The registry's table is Accounts' (its atomic statements join it), so this part declares none.
    static let migrations: [SchemaMigration.Piece] = []
}
