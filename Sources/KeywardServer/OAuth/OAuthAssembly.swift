// The OAuth core, assembled: realms, signing keys, clients, the token endpoint and the one DPoP gate, and its routes.
import Foundation
import Hummingbird
import KeywardJOSE

public struct OAuthAssembly: KeywardPart {
    public let realms: RealmService
    public let keys: RealmKeyService
    public let clients: ClientService
    /// The token endpoint's service before other parts' grants are added: `tokenEndpoint` is the one that answers.
    private let tokens: TokenService
    public let resourceGuard: DPoPResourceGuard
    let accessTokens: AccessTokenIssuer
    let signingKeyStore: any SigningKeyStore
    private let core: CoreServices
    /// Extension grants other parts answer at the token endpoint (RFC 6749 §4.5), plugged in as they are assembled.
    let grants = TokenGrants()
    /// Endpoints other parts serve under the realm's OpenID Connect paths, for discovery.
    let endpoints = ProviderEndpoints()

    init(_ core: CoreServices, settings: OAuthSettings) {
        self.core = core
        let singleUse = core.singleUse
        signingKeyStore = SQLSigningKeyStore(database: core.database)
        keys = RealmKeyService(store: signingKeyStore, masterKey: core.masterKey, clock: core.clock)
        realms = RealmService(store: SQLRealmStore(database: core.database), keys: keys, clock: core.clock, publicURL: core.settings.publicURL)
        clients = ClientService(store: SQLClientStore(database: core.database), clock: core.clock)
        accessTokens = AccessTokenIssuer(realms: realms, keys: keys)
        tokens = TokenService(
            clients: clients, issuer: accessTokens, singleUse: singleUse,
            dpopOptions: Self.dpopOptions(maxAge: settings.tokenEndpointProofMaxAge, futureSkew: settings.tokenEndpointProofFutureSkew),
            nonces: settings.requireNonce ? DPoPNonces(masterKey: core.masterKey) : nil,
            clock: core.clock, metrics: core.metrics, deviceKeys: core.deviceKeys, logger: core.logger
        )
        resourceGuard = DPoPResourceGuard(
            issuer: accessTokens, singleUse: singleUse,
            policy: .resource(proof: Self.dpopOptions(maxAge: settings.resourceProofMaxAge, futureSkew: settings.resourceProofFutureSkew)),
            clock: core.clock, metrics: core.metrics, deviceKeys: core.deviceKeys
        )
    }

    /// The token endpoint with every grant the other parts plugged in.
    var tokenEndpoint: TokenService { tokens.adding(grants.all) }

    /// A gate for another part's resources with a policy of its own, on this part's tokens and Core's single-use records.
    func gate(_ policy: DPoPResourceGuard.Policy) -> DPoPResourceGuard {
        DPoPResourceGuard(issuer: accessTokens, singleUse: core.singleUse, policy: policy, clock: core.clock, metrics: core.metrics, deviceKeys: core.deviceKeys)
    }

    /// The one realm resolver, in front of every part's routes under `/realms/{realm}`.
    var realmResolution: RealmResolution { RealmResolution(realms: realms) }

    /// The token endpoint with the extension grants parts assembled later plugged in (`grants`).
    func registerRoutes(on router: Router<KeywardRequestContext>, web: PageSurface) {
        OAuthRoutes(
            realms: realms, keys: keys, tokens: tokenEndpoint, endpoints: endpoints,
            authentication: DPoPAuthentication(gate: resourceGuard, publicURL: core.settings.publicURL),
            publicURL: core.settings.publicURL, maxBodySize: core.settings.maxBodySize
        ).register(on: router)
    }

    /// The proof window (`maxAge` back, `futureSkew` ahead) and a replay memory that covers all of it.
    static func dpopOptions(maxAge: Int, futureSkew: Int) -> DPoPVerifier.Options {
        var options = DPoPVerifier.Options()
        options.maxAge = TimeInterval(maxAge)
        options.maxFutureSkew = TimeInterval(futureSkew)
        options.replayLifetime = TimeInterval(maxAge + futureSkew)
        return options
    }
}

extension OAuthAssembly {
    static let migrations = [
        InitialSchemaMigration.piece, PublicClientSchemaMigration.piece, ClientRedirectSchemaMigration.piece, BrokerClientSchemaMigration.piece,
        AdminScopeSchemaMigration.piece,
    ]

    var sweeps: [ExpiredRowSweep] { [.signingKeys(signingKeyStore)] }
}

extension ExpiredRowSweep {
    /// Retired signing keys past their publication window.
    static func signingKeys(_ store: any SigningKeyStore) -> ExpiredRowSweep {
        ExpiredRowSweep("signingKeys") { now in try await store.deleteUnpublishedKeys(now: now) }
    }
}
