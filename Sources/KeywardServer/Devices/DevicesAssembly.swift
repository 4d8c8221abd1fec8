// Devices, assembled: the app registry, challenges, registration with platform attestation.
import Foundation
import Hummingbird

public struct DevicesAssembly: Sendable {
    public let apps: DeviceAppService
    let service: DeviceService

    init(_ core: CoreServices, oauth: OAuthAssembly, settings: DeviceSettings) {
        let store = SQLDeviceStore(database: core.database)
        apps = DeviceAppService(store: store, masterKey: core.masterKey, audit: core.audit, clock: core.clock)
        service = DeviceService(
            store: store, replayStore: oauth.replayStore, challengeKey: core.masterKey.derivedKey(purpose: DeviceChallenge.keyPurpose),
            attestations: PlatformAttestationVerifier(
                androidRoots: settings.androidRoots, androidRevocations: settings.androidRevocations, masterKey: core.masterKey
            ),
            audit: core.audit, metrics: core.metrics, clock: core.clock, challengeLifetime: settings.challengeLifetime
        )
    }

    func register(on router: Router<KeywardRequestContext>, realms: RealmService, maxBodySize: Int) {
        DeviceRoutes(service: service, realms: realms, maxBodySize: maxBodySize).register(on: router)
    }
}
