// Tests: KeywardKit's DeviceRegistrar against a live server: register, sign, rotate, replay, clock skew, recovery.
import Foundation
import KeywardJOSE
import KeywardKit
import KeywardServer
import KeywardWire
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// KeywardKit's DeviceRegistrar against a real server over real HTTP: registration (201, then the fast path),
/// signed calls, rotation, a replay, clock skew, recovery from a stop, and the app's attestation policy.
final class DeviceRegistrarAgainstServerTests: XCTestCase {
    static let appId = "com.example.kit"
    private var directory: URL!

    override func setUp() {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-e2e-device-\(UUID())")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    func registrar(_ issuer: String, clock: @escaping @Sendable () -> Date = { Date() }) -> DeviceRegistrar {
        DeviceRegistrar(
            issuer: issuer, platform: .ios, keyStore: FileKeyStore(directory: directory), stateStore: FileDeviceRegistrationStore(directory: directory),
            attester: NoAttestation(), options: .init(retry: RetryPolicy(sleep: { _ in XCTFail("nothing here should be retried") })), clock: clock
        )
    }

    /// The app as `keyward apps add demo com.example.kit --platform ios … --missing-attestation POLICY` adds it.
    static func addApp(_ runtime: KeywardRuntime, missing: DeviceApp.AttestationPolicy = .accept, appId: String = appId) async throws {
        _ = try await runtime.devices.apps.add(DeviceAppService.Registration(
            realm: "demo", appId: appId, platform: .ios, environment: .production, teamId: "ABCDE12345", bundleId: "com.example.keyward",
            missingAttestation: missing
        ))
    }

    func testRegisterSignRotateAndReplay() async throws {
        var issuer = ""
        var registered: DeviceRegistrationState?
        try await LiveServer.run { baseURL, runtime in
            issuer = baseURL + "/realms/demo"
            try await Self.addApp(runtime)
            let registrar = registrar(issuer)

            let first = try await registrar.registerDevice(appId: Self.appId)
            XCTAssertFalse(first.alreadyRegistered, "201: registered now")
            XCTAssertEqual(first.state.status, "registered")
            XCTAssertNotNil(first.state.registeredAt)
            let devices = try await runtime.devices.apps.devices(realm: "demo", appId: Self.appId)
            XCTAssertEqual(devices.map(\.deviceId), [first.state.deviceId])
            registered = first.state

            let again = try await registrar.registerDevice(appId: Self.appId)
            XCTAssertTrue(again.alreadyRegistered)
            XCTAssertEqual(again.state, first.state)

            let (data, response) = try await registrar.send(appId: Self.appId)
            XCTAssertEqual(response.statusCode, 200, String(decoding: data, as: UTF8.self))
            let status = try JSONDecoder().decode(DeviceStatusResponse.self, from: data)
            XCTAssertEqual(status.deviceId, first.state.deviceId)
            XCTAssertEqual(status.status, "registered")
            XCTAssertNil(status.keyRotatedAt)

            // Rotation: the old key signs the request, and is refused afterwards.
            let oldKey = try XCTUnwrap(try FileKeyStore(directory: directory).key(named: first.state.keyName))
            let rotated = try await registrar.rotateKey(appId: Self.appId)
            XCTAssertEqual(rotated.deviceId, first.state.deviceId)
            XCTAssertNotNil(rotated.keyRotatedAt)
            let (afterData, afterRotation) = try await registrar.send(appId: Self.appId)
            XCTAssertEqual(afterRotation.statusCode, 200, String(decoding: afterData, as: UTF8.self))
            XCTAssertNotNil(try JSONDecoder().decode(DeviceStatusResponse.self, from: afterData).keyRotatedAt)
            let stale = try RequestSigner(appId: Self.appId, deviceId: rotated.deviceId, key: oldKey)
            let (staleData, staleAnswer) = try await Self.send(try await Self.statusRequest(issuer, signedBy: stale))
            XCTAssertEqual(staleAnswer.statusCode, 401)
            XCTAssertEqual(try JSONDecoder().decode(APIErrorBody.self, from: staleData).error, .invalidSignature)

            // The same signed request twice: the second is a replay.
            let request = try await Self.statusRequest(issuer, signedBy: try await registrar.requestSigner(appId: Self.appId))
            let (_, once) = try await Self.send(request)
            XCTAssertEqual(once.statusCode, 200)
            let (replayData, replay) = try await Self.send(request)
            XCTAssertEqual(replay.statusCode, 401)
            XCTAssertEqual(try JSONDecoder().decode(APIErrorBody.self, from: replayData).error, .nonceReplay)
        }
        // The server is gone: the fast path still answers, because it sends nothing.
        let offline = try await registrar(issuer).registerDevice(appId: Self.appId)
        XCTAssertTrue(offline.alreadyRegistered)
        XCTAssertEqual(offline.state.deviceId, registered?.deviceId)
        XCTAssertNotNil(offline.state.keyRotatedAt)
    }

    func testADeviceClockAnHourSlowIsCorrectedFromClockSkew() async throws {
        try await LiveServer.run { baseURL, runtime in
            try await Self.addApp(runtime)
            let registrar = registrar(baseURL + "/realms/demo", clock: { Date().addingTimeInterval(-3600) })
            _ = try await registrar.registerDevice(appId: Self.appId)
            let (data, response) = try await registrar.send(appId: Self.appId)
            XCTAssertEqual(response.statusCode, 200, String(decoding: data, as: UTF8.self))
            let saved = try await registrar.state(appId: Self.appId)
            let offset = try XCTUnwrap(saved?.clockOffsetMs)
            XCTAssertEqual(Double(offset), 3_600_000, accuracy: 5_000, "the hour the device's clock is behind")
        }
    }

    func testARegistrationStoppedAfterTheServerAnsweredEndsAlreadyRegistered() async throws {
        try await LiveServer.run { baseURL, runtime in
            try await Self.addApp(runtime)
            let issuer = baseURL + "/realms/demo"
            let first = try await registrar(issuer).registerDevice(appId: Self.appId).state
            // As if the process had stopped before saving the server's 201.
            var stopped = first
            stopped.phase = .registering
            try FileDeviceRegistrationStore(directory: directory).save(stopped)

            let resumed = try await registrar(issuer).registerDevice(appId: Self.appId)
            XCTAssertTrue(resumed.alreadyRegistered, "the server answered ALREADY_REGISTERED to the same key and device id")
            XCTAssertEqual(resumed.state.deviceId, first.deviceId)
            XCTAssertEqual(resumed.state.phase, .registered)
            let devices = try await runtime.devices.apps.devices(realm: "demo", appId: Self.appId)
            XCTAssertEqual(devices.count, 1)
        }
    }

    func testTheAppsPolicyDecidesAboutAMissingAttestation() async throws {
        try await LiveServer.run { baseURL, runtime in
            let issuer = baseURL + "/realms/demo"
            try await Self.addApp(runtime, missing: .reject, appId: "com.example.strict")
            do {
                _ = try await registrar(issuer).registerDevice(appId: "com.example.strict")
                XCTFail("registered without the attestation the app requires")
            } catch {
                guard case .server(400, "ATTESTATION_UNAVAILABLE", _)? = error as? KeywardKitError else { return XCTFail("\(error)") }
            }
            let refused = try await registrar(issuer).state(appId: "com.example.strict")
            XCTAssertEqual(refused?.phase, .unregistered)

            try await Self.addApp(runtime, missing: .pending, appId: "com.example.reviewed")
            let pending = try await registrar(issuer).registerDevice(appId: "com.example.reviewed")
            XCTAssertEqual(pending.state.status, "pending")
            let (data, response) = try await registrar(issuer).send(appId: "com.example.reviewed")
            XCTAssertEqual(response.statusCode, 403)
            XCTAssertEqual(try JSONDecoder().decode(APIErrorBody.self, from: data).error, .devicePending)

            do {
                _ = try await registrar(issuer).registerDevice(appId: "com.example.unknown")
                XCTFail("registered with an app the realm does not have")
            } catch {
                guard case .server(404, "NOT_CONFIGURED", _)? = error as? KeywardKitError else { return XCTFail("\(error)") }
            }
        }
    }

    static func statusRequest(_ issuer: String, signedBy signer: RequestSigner) async throws -> URLRequest {
        let url = try XCTUnwrap(URL(string: issuer + "/v1/device/status"))
        var request = URLRequest(url: url)
        try await signer.sign(method: "GET", target: RequestSigner.target(of: url)).apply(to: &request)
        return request
    }

    static func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await URLSession.shared.data(for: request)
        return (data, try XCTUnwrap(response as? HTTPURLResponse))
    }
}
