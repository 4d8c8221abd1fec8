// Tests: an App Attest device signs with growing-counter assertions against a live server; replays are refused.
import AttestationTestSupport
import Crypto
import Foundation
import Hummingbird
import KeywardAttestation
import KeywardJOSE
import KeywardKit
@testable import KeywardServer
import KeywardWire
import Logging
import ServiceLifecycle
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// KeywardKit on an iPhone registered through App Attest, against a real server over real HTTP: the registrar keeps
/// the key id of the attestation the server took and signs requests with assertions (`appattest-1`) whose counter
/// grows; a replayed assertion is refused; the key id survives the state file and the next launch. App Attest is
/// `ForgedAppAttestDevice` (keys made here, certified by a forged CA the device service pins in place of Apple's, as
/// DeviceAppAttestTests does), since no real attestation can carry this server's challenge.
final class DeviceAssertionsAgainstServerTests: XCTestCase {
    static let appId = "com.example.attested"
    static let teamId = "6MURL8TA57"
    static let bundleId = "de.vincent-haupert.apple-appattest-poc"
    private var directory: URL!

    override func setUp() {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-e2e-assertions-\(UUID())")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    func registrar(_ issuer: String, attester: any Attester) -> DeviceRegistrar {
        DeviceRegistrar(
            issuer: issuer, platform: .ios, keyStore: FileKeyStore(directory: directory), stateStore: FileDeviceRegistrationStore(directory: directory),
            attester: attester, options: .init(retry: RetryPolicy(sleep: { _ in XCTFail("nothing here should be retried") }))
        )
    }

    func testAnAttestedDeviceSignsWithAssertionsWhoseCounterGrows() async throws {
        try await Self.run { issuer, runtime, device in
            try await Self.addApp(runtime)
            let registrar = registrar(issuer, attester: device)
            let registration = try await registrar.registerDevice(appId: Self.appId)
            XCTAssertEqual(registration.attestation, .sent(type: "app-attest"))
            let keyId = try XCTUnwrap(registration.state.appAttestKeyId, "the key id of the attestation the server took is kept")
            XCTAssertEqual(device.keyIds, [keyId])
            let stored = try await Self.device(runtime, registration.state.deviceId)
            XCTAssertEqual(stored.appAttestKeyId, keyId)
            // The registrar checked the key with one assertion right after registering.
            XCTAssertEqual(device.counter(keyId), 1)
            XCTAssertEqual(stored.assertionCounter, 1)

            for expected in Int64(2)...4 {
                let (data, response) = try await registrar.send(appId: Self.appId)
                XCTAssertEqual(response.statusCode, 200, String(decoding: data, as: UTF8.self))
                XCTAssertEqual(try JSONDecoder().decode(DeviceStatusResponse.self, from: data).deviceId, registration.state.deviceId)
                let counter = try await Self.device(runtime, registration.state.deviceId).assertionCounter
                XCTAssertEqual(counter, expected, "the server stored the assertion's counter")
            }

            // The same signed request twice: its assertion's counter no longer exceeds the stored one.
            let signer = try await registrar.requestSigner(appId: Self.appId)
            XCTAssertEqual(signer.version, "appattest-1")
            let (request, headers) = try await Self.statusRequest(issuer, signedBy: signer)
            XCTAssertEqual(headers.version, "appattest-1")
            XCTAssertEqual(
                try Self.verifiedCounter(headers, target: "/realms/demo/v1/device/status", device: device, keyId: keyId), 5,
                "the signature header is an assertion by the attested key over the signed message"
            )
            let (onceData, once) = try await Self.send(request)
            XCTAssertEqual(once.statusCode, 200, String(decoding: onceData, as: UTF8.self))
            let (replayData, replay) = try await Self.send(request)
            XCTAssertEqual(replay.statusCode, 401)
            let refusal = try StrictJSON.parseObject(Array(replayData))
            XCTAssertEqual(refusal.string("error"), "INVALID_SIGNATURE")
            XCTAssertEqual(refusal.string("reason"), "COUNTER_NOT_INCREASING")
            let counter = try await Self.device(runtime, registration.state.deviceId).assertionCounter
            XCTAssertEqual(counter, 5, "the replay moved nothing")

            // An assertion made earlier and sent later is refused as well...
            let (early, _) = try await Self.statusRequest(issuer, signedBy: signer)
            let (late, _) = try await Self.statusRequest(issuer, signedBy: signer)
            let lateAnswer = try await Self.send(late).1
            XCTAssertEqual(lateAnswer.statusCode, 200)
            let earlyAnswer = try await Self.send(early).1
            XCTAssertEqual(earlyAnswer.statusCode, 401)
            // ...which is why the registrar signs a refused counter once more: calls side by side all pass.
            for _ in 0..<5 {
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<2 { group.addTask { try await registrar.send(appId: Self.appId).1.statusCode } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                XCTAssertEqual(statuses, [200, 200])
            }
        }
    }

    func testTheKeyIdSurvivesTheStateFileAndTheNextLaunch() async throws {
        try await Self.run { issuer, runtime, device in
            try await Self.addApp(runtime)
            let first = try await registrar(issuer, attester: device).registerDevice(appId: Self.appId).state
            let keyId = try XCTUnwrap(first.appAttestKeyId)
            let file = directory.appendingPathComponent("registration-\(Self.appId).json")
            XCTAssertEqual(try StrictJSON.parseObject(Array(try Data(contentsOf: file))).string("app_attest_key_id"), keyId)

            // The next launch: a new registrar on the same files, its fast path, then assertions by the same key.
            let relaunched = registrar(issuer, attester: device)
            let again = try await relaunched.registerDevice(appId: Self.appId)
            XCTAssertTrue(again.alreadyRegistered)
            XCTAssertEqual(again.state.appAttestKeyId, keyId)
            let before = try XCTUnwrap(device.counter(keyId))
            let (data, response) = try await relaunched.send(appId: Self.appId)
            XCTAssertEqual(response.statusCode, 200, String(decoding: data, as: UTF8.self))
            XCTAssertEqual(device.counter(keyId), before + 1)
            XCTAssertEqual(device.keyIds, [keyId], "no new App Attest key")

            // A registrar whose attester cannot assert signs with the device key, which the server refuses for a
            // device registered with App Attest: only the genuine app, asserting, speaks for it.
            let withoutAppAttest = registrar(issuer, attester: NoAttestation())
            let signer = try await withoutAppAttest.requestSigner(appId: Self.appId)
            XCTAssertEqual(signer.version, "1")
            let (keyData, keySigned) = try await withoutAppAttest.send(appId: Self.appId)
            XCTAssertEqual(keySigned.statusCode, 401, String(decoding: keyData, as: UTF8.self))
            XCTAssertTrue(String(decoding: keyData, as: UTF8.self).contains("appattest-1"))
            XCTAssertEqual(device.counter(keyId), before + 1)
        }
    }

    func testAnAnswerLostAfterTheAttestationWasTakenEndsWithTheKeyTheServerHolds() async throws {
        try await Self.run { issuer, runtime, device in
            try await Self.addApp(runtime)
            let first = try await registrar(issuer, attester: device).registerDevice(appId: Self.appId).state
            let keyId = try XCTUnwrap(first.appAttestKeyId)
            // As if the process had stopped before saving the server's 201: the state still says `registering`.
            var stopped = first
            stopped.phase = .registering
            try FileDeviceRegistrationStore(directory: directory).save(stopped)

            let resumed = try await registrar(issuer, attester: device).registerDevice(appId: Self.appId)
            XCTAssertTrue(resumed.alreadyRegistered)
            XCTAssertEqual(device.keyIds.count, 2, "the new attempt attested a new key, which the server did not look at")
            XCTAssertEqual(resumed.state.appAttestKeyId, keyId, "the key of the attempt the server registered")
            let (data, response) = try await registrar(issuer, attester: device).send(appId: Self.appId)
            XCTAssertEqual(response.statusCode, 200, String(decoding: data, as: UTF8.self))
        }
    }

    func testAFailedAttestationThePolicyAcceptsLeavesTheDeviceKeySigning() async throws {
        try await Self.run { issuer, runtime, device in
            // The app's team id is not the one the attestation's App ID hash names: RP_ID_MISMATCH, which this app accepts.
            _ = try await runtime.devices.apps.add(DeviceAppService.Registration(
                realm: "demo", appId: Self.appId, platform: .ios, environment: .development, teamId: "ABCDE12345", bundleId: Self.bundleId,
                failedAttestation: .accept
            ))
            let registration = try await registrar(issuer, attester: device).registerDevice(appId: Self.appId)
            XCTAssertFalse(registration.alreadyRegistered)
            XCTAssertEqual(registration.state.status, "registered")
            XCTAssertNil(registration.state.appAttestKeyId, "the server refused the assertion: it holds no App Attest key for the device")
            let stored = try await Self.device(runtime, registration.state.deviceId)
            XCTAssertNil(stored.appAttestKeyId)
            let saved = try FileDeviceRegistrationStore(directory: directory).state(appId: Self.appId)
            XCTAssertNil(saved?.appAttestKeyId)

            let registrar = registrar(issuer, attester: device)
            let signer = try await registrar.requestSigner(appId: Self.appId)
            XCTAssertEqual(signer.version, "1")
            let (data, response) = try await registrar.send(appId: Self.appId)
            XCTAssertEqual(response.statusCode, 200, String(decoding: data, as: UTF8.self))
        }
    }

    // MARK: - The server

    /// The app as `keyward apps add demo com.example.attested --platform ios --environment development …` adds it.
    static func addApp(_ runtime: KeywardRuntime) async throws {
        _ = try await runtime.devices.apps.add(DeviceAppService.Registration(
            realm: "demo", appId: appId, platform: .ios, environment: .development, teamId: teamId, bundleId: bundleId
        ))
    }

    static func device(_ runtime: KeywardRuntime, _ deviceId: String) async throws -> Device {
        let devices = try await runtime.devices.apps.devices(realm: "demo", appId: appId)
        return try XCTUnwrap(devices.first { $0.deviceId == deviceId })
    }

    /// A real Keyward (demo seed, fresh SQLite database) serving the device routes on a loopback port, with a
    /// device service that pins the forged App Attest CA of `device` in place of Apple's; the rest of the
    /// service is the runtime's own (its store, replay cache, audit, clock).
    static func run(_ body: (_ issuer: String, _ runtime: KeywardRuntime, _ device: ForgedAppAttestDevice) async throws -> Void) async throws {
        let dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-e2e-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dataDirectory) }
        var configuration = KeywardConfiguration()
        configuration.dataDirectory = dataDirectory.path
        var logger = Logger(label: "keyward-e2e-assertions")
        logger.logLevel = .warning
        let runtime = try await KeywardRuntime.start(configuration: configuration, logger: logger)
        _ = try await runtime.seedDemo()
        let device = try ForgedAppAttestDevice(time: runtime.clock.now(), appID: teamId + "." + bundleId)
        let service = DeviceService(
            store: SQLDeviceStore(database: runtime.database), singleUse: runtime.singleUse, challengeKey: SymmetricKey(size: .bits256),
            attestations: PlatformAttestationVerifier(appleRoots: PinnedRoots([device.forged.ca])),
            audit: runtime.audit, metrics: runtime.metrics, clock: runtime.clock
        )
        let router = Router(context: KeywardRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        DeviceRoutes(service: service, realms: runtime.oauth.realms, maxBodySize: configuration.maxBodySize, clients: configuration.clientNetworks).register(on: router)
        let ports = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in ports.continuation.yield(channel.localAddress?.port ?? 0) }, logger: logger
        )
        let serviceGroup = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await serviceGroup.run() }
                var port = 0
                for await running in ports.stream {
                    port = running
                    break
                }
                do {
                    try await body("http://127.0.0.1:\(port)/realms/demo", runtime, device)
                } catch {
                    await serviceGroup.triggerGracefulShutdown()
                    throw error
                }
                await serviceGroup.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        } catch {
            try? await runtime.shutdown()
            throw error
        }
        try await runtime.shutdown()
    }

    // MARK: - Requests

    static func statusRequest(_ issuer: String, signedBy signer: RequestSigner) async throws -> (URLRequest, SignedRequestHeaders) {
        let url = try XCTUnwrap(URL(string: issuer + "/v1/device/status"))
        var request = URLRequest(url: url)
        let headers = try await signer.sign(method: "GET", target: RequestSigner.target(of: url))
        headers.apply(to: &request)
        return (request, headers)
    }

    static func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await URLSession.shared.data(for: request)
        return (data, try XCTUnwrap(response as? HTTPURLResponse))
    }

    /// The counter of the assertion a signature header carries, after KeywardAttestation's verifier has checked it
    /// against the App Attest key `keyId` of `device` and the message the headers name.
    static func verifiedCounter(_ headers: SignedRequestHeaders, target: String, device: ForgedAppAttestDevice, keyId: String) throws -> UInt32 {
        let assertion = try XCTUnwrap(Data(base64Encoded: headers.signature))
        let message = RequestSigner.message(method: "GET", target: target, timestamp: headers.timestamp, nonce: headers.nonce, body: [])
        let verifier = AppAttestVerifier(appID: teamId + "." + bundleId, environment: .development)
        let key = try XCTUnwrap(device.publicKey(keyId))
        return try verifier.verifyAssertion(Array(assertion), clientData: .data(message), publicKey: key, previousCounter: 0).counter
    }
}
