// Passkeys, assembled: settings per realm, registered passkeys, the WebAuthn ceremonies and their JSON endpoints.
import Foundation
import Hummingbird

/// Passkeys (issue 31): built from Core (database, master key, single-use records, audit, clock), the OAuth core
/// (realms), Accounts (users, browser sessions, the login flow it signs people in through) and Devices (the apps
/// the association files name).
public struct PasskeysAssembly: KeywardPart {
    /// Each realm's passkey settings (`keyward realms update R --passkeys …`).
    public let settings: PasskeySettingsStore
    let service: PasskeyService
    private let browser: BrowserRequests
    private let signInCompletion: SignInCompletion
    private let plugins: AccountPlugins
    private let realmResolution: RealmResolution
    private let clock: any KeywardClock

    private let associationFiles: AssociationFiles

    init(_ core: CoreServices, oauth: OAuthAssembly, accounts: AccountsAssembly, devices: DevicesAssembly) {
        settings = PasskeySettingsStore(database: core.database, clock: core.clock)
        service = PasskeyService(
            store: SQLPasskeyStore(database: core.database), settings: settings, users: accounts.users, realms: oauth.realms,
            singleUse: core.singleUse, sealer: SealedJSON(masterKey: core.masterKey, purpose: PasskeyChallenge.purpose), audit: core.audit,
            clock: core.clock, publicURL: core.settings.publicURL, apps: devices.apps
        )
        (browser, realmResolution, clock) = (accounts.browser, oauth.realmResolution, core.clock)
        associationFiles = AssociationFiles(realms: oauth.realms, apps: devices.apps, settings: settings, publicURL: core.settings.publicURL)
        signInCompletion = accounts.signInCompletion
        plugins = accounts.plugins
        let factor = PasskeySecondFactor(service: service)
        accounts.plugins.plug(secondFactor: factor)
        accounts.plugins.add(signInMethods: factor)
        accounts.plugins.add(signInSection: PasskeySignInSection(service: service))
        accounts.plugins.add(removalStep: PasskeyRemoval(service: service))
    }

    func registerRoutes(on router: Router<KeywardRequestContext>, web: PageSurface) {
        PasskeyRoutes(
            service: service, browser: browser, signIn: signInCompletion, secondFactor: plugins.secondFactor, realmResolution: realmResolution, clock: clock
        ).register(on: router)
        associationFiles.register(on: router)
        PasskeyPages(renderer: web.renderer, browser: browser, service: service, plugins: plugins, clock: clock).register(on: web.pages)
    }
}

extension PasskeysAssembly {
    static let migrations = [PasskeySchemaMigration.piece]
}

/// A user's passkeys go with them: the rows do not reference the user, so nothing else would remove them.
struct PasskeyRemoval: UserRemovalStep {
    let service: PasskeyService

    func removing(realm: String, user: User, identities: [ExternalIdentity]) async throws -> (@Sendable () async -> Void)? {
        _ = try await service.store.deleteAll(realm: realm, userId: user.id)
        return nil
    }
}
