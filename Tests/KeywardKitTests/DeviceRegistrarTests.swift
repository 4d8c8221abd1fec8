// Tests: device registration against a fake realm: request, fast path, retries, recovery, lost key, attestation.
import Crypto
import Foundation
import KeywardJOSE
import KeywardKit
import XCTest

/// `registerDevice` against the fake realm: the request the contract asks for, the fast path, retries with fresh
/// challenges (and only where the issue allows them), recovery from a stop between phases, a lost key, the attester
/// and its deadline.
final class DeviceRegistrarTests: DeviceRegistrarTestCase {
    func testARegistrationSendsTheContractsRequestAndIsSavedRegistered() async throws {
        let result = try await registrar().registerDevice(appId: Self.appId)

        XCTAssertFalse(result.alreadyRegistered)
        XCTAssertEqual(result.attestation, AttestationOutcome.none)
        let state = result.state
        XCTAssertEqual(state.phase, .registered)
        XCTAssertEqual(state.status, "registered")
        XCTAssertEqual(state.registeredAt, Date(timeIntervalSince1970: 1_900_000_000 - 90))
        XCTAssertEqual(state.issuer, realm.issuer)
        XCTAssertNotNil(UUID(uuidString: state.deviceId), "a UUID chosen by the installation")
        XCTAssertEqual(state.deviceId, state.deviceId.lowercased())
        XCTAssertEqual(try stateStore.state(appId: Self.appId), state, "saved as returned")

        XCTAssertEqual(realm.requests.map { "\($0.method) \($0.path)" }, [
            "POST /realms/demo/v1/device/challenge", "POST /realms/demo/v1/device/register",
        ])
        XCTAssertEqual(try body(realm.requests[0]), ["app_id": .string(Self.appId)])
        let registration = try body(realm.requests[1])
        XCTAssertEqual(Set(registration.keys), ["app_id", "device_id", "challenge", "public_key", "platform", "proof"])
        XCTAssertEqual(registration.string("app_id"), Self.appId)
        XCTAssertEqual(registration.string("device_id"), state.deviceId)
        XCTAssertEqual(registration.string("platform"), "ios")
        let point = try publicPoint(state.keyName)
        XCTAssertEqual(registration.string("public_key"), Data(point).base64EncodedString(), "standard base64 of the 65-byte point")
        let challenge = try XCTUnwrap(registration.string("challenge"))
        let proof = try P256.Signing.ECDSASignature(derRepresentation: XCTUnwrap(Data(base64Encoded: XCTUnwrap(registration.string("proof")))))
        XCTAssertTrue(try P256.Signing.PublicKey(x963Representation: point).isValidSignature(proof, for: Array(challenge.utf8)))
        XCTAssertEqual(realm.device(state.deviceId)?.publicKey, point)
        XCTAssertEqual(realm.requests[1].headers["content-type"], "application/json")
    }

    func testRegisteringAgainSendsNothing() async throws {
        let first = try await registrar().registerDevice(appId: Self.appId)
        let sent = realm.requests.count

        // Another registrar on the same directory: the next launch of the app.
        let again = try await registrar().registerDevice(appId: Self.appId)
        XCTAssertTrue(again.alreadyRegistered)
        XCTAssertNil(again.attestation)
        XCTAssertEqual(again.state, first.state)
        XCTAssertEqual(realm.requests.count, sent, "the fast path makes no request")
    }

    func testServerErrorsAreRetriedEachTimeWithAFreshChallenge() async throws {
        realm.script("challenge", FakeDeviceRealm.refusal(502, "bad_gateway"))
        realm.script("register", FakeDeviceRealm.refusal(503, "unavailable"), FakeDeviceRealm.refusal(500, "internal_error"))

        let result = try await registrar().registerDevice(appId: Self.appId)
        XCTAssertFalse(result.alreadyRegistered)
        XCTAssertEqual(sleeps.all, [.milliseconds(2250), .milliseconds(4250), .milliseconds(8250)])
        XCTAssertEqual(realm.requests(to: "challenge").count, 4)
        let registrations = try realm.requests(to: "register").map(body)
        XCTAssertEqual(registrations.count, 3)
        XCTAssertEqual(Set(registrations.compactMap { $0.string("challenge") }).count, 3, "never the same challenge twice")
        XCTAssertEqual(Set(registrations.compactMap { $0.string("device_id") }), [result.state.deviceId], "one device id throughout")
        XCTAssertEqual(Set(registrations.compactMap { $0.string("public_key") }).count, 1, "one key throughout")
    }

    func testNoAnswerIsTriedFiveTimesThenReported() async throws {
        let store = RecordingStateStore(stateStore)
        do {
            _ = try await registrar(issuer: "http://127.0.0.1:1/realms/demo", stateStore: store).registerDevice(appId: Self.appId)
            XCTFail("registered with nobody listening")
        } catch {
            guard case .unreachable? = error as? KeywardKitError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(sleeps.all, [.milliseconds(2250), .milliseconds(4250), .milliseconds(8250), .milliseconds(16250)])
        XCTAssertEqual(try stateStore.state(appId: Self.appId)?.phase, .unregistered)
        XCTAssertEqual(store.saved.all, [.unregistered], "no challenge ever came")
    }

    func testRefusalsAreNotRetried() async throws {
        for (status, code) in [(400, "ATTESTATION_UNAVAILABLE"), (404, "NOT_CONFIGURED"), (409, "REGISTRATION_IN_PROGRESS"), (429, "rate_limited")] {
            realm.script("register", FakeDeviceRealm.refusal(status, code))
            let before = realm.requests(to: "register").count
            do {
                _ = try await registrar().registerDevice(appId: Self.appId)
                XCTFail("\(code) was taken for success")
            } catch {
                assertRefused(error, status: status, code: code)
                XCTAssertEqual((error as? KeywardKitError)?.description, "server answered \(status) \(code): refused by the fake realm")
            }
            XCTAssertEqual(realm.requests(to: "register").count, before + 1, code)
            XCTAssertEqual(try stateStore.state(appId: Self.appId)?.phase, .unregistered, code)
        }
        XCTAssertEqual(sleeps.all, [])

        // The refusals burned nothing: the same device id and key register now.
        let deviceId = try XCTUnwrap(try stateStore.state(appId: Self.appId)?.deviceId)
        let result = try await registrar().registerDevice(appId: Self.appId)
        XCTAssertEqual(result.state.deviceId, deviceId)
        XCTAssertEqual(Set(try realm.requests(to: "register").map(body).compactMap { $0.string("public_key") }).count, 1)
    }

    func testAStopBeforeTheRegistrationWasSentResumesWithAFreshChallenge() async throws {
        let dying = RecordingStateStore(stateStore, diesBeforeSaving: .registering)
        do {
            _ = try await registrar(stateStore: dying).registerDevice(appId: Self.appId)
            XCTFail("the store died")
        } catch is RecordingStateStore.Died {}
        XCTAssertEqual(dying.saved.all, [.unregistered, .challengeReceived, .keyReady])
        XCTAssertEqual(realm.requests(to: "register").count, 0)
        let stopped = try XCTUnwrap(try stateStore.state(appId: Self.appId))
        XCTAssertEqual(stopped.phase, .keyReady)

        let recording = RecordingStateStore(stateStore)
        let result = try await registrar(stateStore: recording).registerDevice(appId: Self.appId)
        XCTAssertFalse(result.alreadyRegistered)
        XCTAssertEqual(recording.saved.all, [.unregistered, .challengeReceived, .keyReady, .registering, .registered])
        XCTAssertEqual(result.state.deviceId, stopped.deviceId)
        XCTAssertEqual(try body(try XCTUnwrap(realm.requests(to: "register").first)).string("public_key"), Data(try publicPoint(stopped.keyName)).base64EncodedString(), "the key made before the stop")
        XCTAssertEqual(realm.requests(to: "challenge").count, 2)
    }

    func testAStopAfterTheServerRegisteredEndsAlreadyRegistered() async throws {
        let dying = RecordingStateStore(stateStore, diesBeforeSaving: .registered)
        do {
            _ = try await registrar(stateStore: dying).registerDevice(appId: Self.appId)
            XCTFail("the store died")
        } catch is RecordingStateStore.Died {}
        let stopped = try XCTUnwrap(try stateStore.state(appId: Self.appId))
        XCTAssertEqual(stopped.phase, .registering, "the server's 201 never made it into the state")
        XCTAssertNotNil(realm.device(stopped.deviceId))

        let result = try await registrar().registerDevice(appId: Self.appId)
        XCTAssertTrue(result.alreadyRegistered, "the server answered ALREADY_REGISTERED")
        XCTAssertEqual(result.state.phase, .registered)
        XCTAssertEqual(result.state.deviceId, stopped.deviceId)
        let challenges = try realm.requests(to: "register").map(body).compactMap { $0.string("challenge") }
        XCTAssertEqual(challenges.count, 2)
        XCTAssertNotEqual(challenges[0], challenges[1])
    }

    func testALostKeyRegistersAfreshUnderANewDeviceId() async throws {
        let first = try await registrar().registerDevice(appId: Self.appId).state
        try keyStore.deleteKey(named: first.keyName)

        let recording = RecordingStateStore(stateStore)
        let result = try await registrar(stateStore: recording).registerDevice(appId: Self.appId)
        XCTAssertFalse(result.alreadyRegistered)
        XCTAssertEqual(recording.saved.all, [.keyInvalid, .unregistered, .challengeReceived, .keyReady, .registering, .registered])
        XCTAssertNotEqual(result.state.deviceId, first.deviceId, "the server keeps the old id bound to the lost key")
        XCTAssertNotEqual(result.state.keyName, first.keyName)
        XCTAssertEqual(realm.device(result.state.deviceId)?.publicKey, try publicPoint(result.state.keyName))
    }

    func testTheAttestationIsBoundToWhatTheRegistrationSends() async throws {
        let nonces = Recorder<[UInt8]>()
        let attester = ClosureAttester { nonce in
            nonces.append(nonce)
            return ["type": "app-attest", "keyId": "a2V5LWlk", "object": "b2JqZWN0"]
        }
        let result = try await registrar(attester: attester).registerDevice(appId: Self.appId)
        XCTAssertEqual(result.attestation, .sent(type: "app-attest"))

        let registration = try body(try XCTUnwrap(realm.requests(to: "register").first))
        XCTAssertEqual(registration["attestation"], .object(["type": "app-attest", "keyId": "a2V5LWlk", "object": "b2JqZWN0"]))
        let challenge = try XCTUnwrap(registration.string("challenge"))
        let publicKey = try XCTUnwrap(registration.string("public_key"))
        XCTAssertEqual(nonces.all, [Array(SHA256.hash(data: Array((challenge + publicKey).utf8)))], "SHA-256(challenge ‖ public_key) as sent")
    }

    func testAnAttesterThatFailsOrHangsLeavesTheAttestationOut() async throws {
        struct NoAppAttest: Error {}
        let failing = ClosureAttester { _ in throw NoAppAttest() }
        let failed = try await registrar(attester: failing).registerDevice(appId: Self.appId)
        guard case .failed(let reason)? = failed.attestation else { return XCTFail("\(String(describing: failed.attestation))") }
        XCTAssertTrue(reason.contains("NoAppAttest"), reason)

        let hanging = ClosureAttester { _ in
            try await Task.sleep(for: .seconds(3600))
            return ["type": "app-attest"]
        }
        let timedOut = try await registrar(attester: hanging, attestationTimeout: .milliseconds(100)).registerDevice(appId: "com.example.other")
        XCTAssertEqual(timedOut.attestation, .timedOut(after: .milliseconds(100)))
        XCTAssertFalse(timedOut.alreadyRegistered)
        for registration in try realm.requests(to: "register").map(body) {
            XCTAssertNil(registration["attestation"], "no attestation member at all")
        }
    }

    func testConcurrentCallsShareOneRegistration() async throws {
        let registrar = registrar()
        async let first = registrar.registerDevice(appId: Self.appId)
        async let second = registrar.registerDevice(appId: Self.appId)
        let results = try await [first, second]
        XCTAssertEqual(results[0].state, results[1].state)
        XCTAssertEqual(realm.requests(to: "register").count, 1)
    }

    func testADeviceIdCanBeChosenOnceAndMustBeValid() async throws {
        let result = try await registrar().registerDevice(appId: Self.appId, deviceId: "install-42.a_b")
        XCTAssertEqual(result.state.deviceId, "install-42.a_b")
        XCTAssertEqual(try body(try XCTUnwrap(realm.requests(to: "register").first)).string("device_id"), "install-42.a_b")

        do {
            _ = try await registrar().registerDevice(appId: Self.appId, deviceId: "install-43")
            XCTFail("registered a second id")
        } catch {
            XCTAssertEqual(error as? KeywardKitError, .deviceIdMismatch(registered: "install-42.a_b", requested: "install-43"))
        }
        for bad in ["", "with space", "slash/", String(repeating: "x", count: 129)] {
            do {
                _ = try await registrar().registerDevice(appId: "com.example.other", deviceId: bad)
                XCTFail("took device id '\(bad)'")
            } catch {
                guard case .invalidOption("device-id", _)? = error as? KeywardKitError else { return XCTFail("\(error)") }
            }
        }
        XCTAssertEqual(realm.requests(to: "register").count, 1)
    }

    func testARegistrationWithAnotherRealmIsNotTakenForThisOne() async throws {
        var elsewhere = DeviceRegistrationState(appId: Self.appId, issuer: "https://id.example.com/realms/other", deviceId: "d", keyName: "k")
        elsewhere.phase = .unregistered
        try stateStore.save(elsewhere)
        do {
            _ = try await registrar().registerDevice(appId: Self.appId)
            XCTFail("used another realm's state")
        } catch {
            XCTAssertEqual(error as? KeywardKitError, .registeredElsewhere(appId: Self.appId, issuer: "https://id.example.com/realms/other"))
        }
        do {
            _ = try await registrar().registerDevice(appId: "no/slashes")
            XCTFail("took a bad app id")
        } catch {
            XCTAssertEqual(error as? KeywardKitError, .invalidAppId("no/slashes"))
        }
        XCTAssertEqual(realm.requests.count, 0)
    }
}

/// An attester whose answer the test writes.
struct ClosureAttester: Attester {
    let answer: @Sendable ([UInt8]) async throws -> JSONObject?
    init(_ answer: @escaping @Sendable ([UInt8]) async throws -> JSONObject?) { self.answer = answer }
    func attestation(bindingNonce: [UInt8]) async throws -> JSONObject? { try await answer(bindingNonce) }
}
