// Host-signed tokens, assembled: the issuer registry, issuer keys (JWKS URLs fetched and cached, PEM
// certificates), and the jwt-bearer grant the OAuth core's token endpoint answers with.
import Foundation

public struct HostTokensAssembly: KeywardPart {
    public let issuers: HostIssuerService
    private let fetcher: HTTPDocumentFetcher

    init(_ core: CoreServices, oauth: OAuthAssembly, accounts: AccountsAssembly) {
        let directory = HostIssuerDirectory(store: SQLHostIssuerStore(database: core.database), clock: core.clock)
        fetcher = HTTPDocumentFetcher()
        let keys = HostIssuerKeys(jwks: JWKSCache(fetcher: fetcher, clock: core.clock, logger: core.logger), clock: core.clock)
        issuers = HostIssuerService(
            store: SQLHostIssuerStore(database: core.database), directory: directory, users: accounts.users,
            audit: core.audit, clock: core.clock
        )
        let verifier = HostTokenVerifier(issuers: directory, keys: keys, realmIssuerURL: { [realms = oauth.realms] in realms.issuer(of: $0) })
        oauth.grants.add(JWTBearerGrant(verifier: verifier, users: accounts.users, metrics: core.metrics))
    }

    func shutdown() async {
        await fetcher.shutdown()
    }
}

extension HostTokensAssembly {
    static let migrations = [HostTokenSchemaMigration.piece]
}
