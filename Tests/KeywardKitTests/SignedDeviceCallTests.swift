// Tests: signed device calls verify with the registered key, and the clock is corrected once from CLOCK_SKEW.
import Crypto
import Foundation
import KeywardJOSE
import KeywardKit
import XCTest

/// `DeviceRegistrar.send`: requests the fake realm verifies with the registered key, and the clock corrected once
/// from `CLOCK_SKEW`.
final class SignedDeviceCallTests: DeviceRegistrarTestCase {
    func registered() async throws -> DeviceRegistrationState {
        let state = try await registrar().registerDevice(appId: Self.appId).state
        return state
    }

    func testASignedCallIsAcceptedByTheKeyItRegistered() async throws {
        let state = try await registered()
        let (data, response) = try await registrar().send(appId: Self.appId)
        XCTAssertEqual(response.statusCode, 200, String(decoding: data, as: UTF8.self))
        XCTAssertEqual(try StrictJSON.parseObject(Array(data)).string("device_id"), state.deviceId)

        let request = try XCTUnwrap(realm.requests(to: "status").last)
        XCTAssertEqual(request.method, "GET")
        XCTAssertEqual(request.path, "/realms/demo/v1/device/status")
        XCTAssertEqual(request.headers["x-app-id"], Self.appId)
        XCTAssertEqual(request.headers["x-device-id"], state.deviceId)
        XCTAssertEqual(request.headers["x-keyward-timestamp"], "1900000000")
        XCTAssertEqual(request.headers["x-keyward-sig-version"], "1")

        // A body and a query are signed too; the fake rebuilds the message from the bytes it received.
        let (_, posted) = try await registrar().send(appId: Self.appId, method: "POST", path: "/v1/device/status?trace=1", body: Data(#"{"a":1}"#.utf8))
        XCTAssertEqual(posted.statusCode, 200)
        XCTAssertEqual(realm.requests(to: "status").last?.path, "/realms/demo/v1/device/status?trace=1")
    }

    func testClockSkewIsLearnedSavedAndTheCallSentOnceMoreSignedAnew() async throws {
        _ = try await registered()
        realm.setServerTime(Self.serverTime + 3600)

        let (_, response) = try await registrar().send(appId: Self.appId)
        XCTAssertEqual(response.statusCode, 200)
        let attempts = realm.requests(to: "status")
        XCTAssertEqual(attempts.map { $0.headers["x-keyward-timestamp"] }, ["1900000000", "1900003600"])
        XCTAssertNotEqual(attempts[0].headers["x-keyward-nonce"], attempts[1].headers["x-keyward-nonce"])
        XCTAssertEqual(try stateStore.state(appId: Self.appId)?.clockOffsetMs, 3_600_500, "the middle of the server's second")

        // The next call starts from the saved offset.
        _ = try await registrar().send(appId: Self.appId)
        XCTAssertEqual(realm.requests(to: "status").count, 3)
        XCTAssertEqual(realm.requests(to: "status").last?.headers["x-keyward-timestamp"], "1900003600")
        let signer = try await registrar().requestSigner(appId: Self.appId)
        XCTAssertEqual(signer.clockOffsetMs, 3_600_500)
    }

    func testClockSkewIsRetriedOnceAndOnlyWithAServerTime() async throws {
        _ = try await registered()
        realm.script("status", FakeDeviceRealm.refusal(401, "CLOCK_SKEW", serverTimestamp: Self.serverTime), FakeDeviceRealm.refusal(401, "CLOCK_SKEW", serverTimestamp: Self.serverTime))
        let (data, response) = try await registrar().send(appId: Self.appId)
        XCTAssertEqual(response.statusCode, 401, "the second refusal is the answer")
        XCTAssertEqual(try StrictJSON.parseObject(Array(data)).string("error"), "CLOCK_SKEW")
        XCTAssertEqual(realm.requests(to: "status").count, 2)

        realm.script("status", FakeDeviceRealm.refusal(401, "CLOCK_SKEW"))
        let (_, unhelpful) = try await registrar().send(appId: Self.appId)
        XCTAssertEqual(unhelpful.statusCode, 401)
        XCTAssertEqual(realm.requests(to: "status").count, 3, "no server time, nothing to learn, no second try")

        for absurd in [Int64(-1), 9_007_199_254_740_991] {
            realm.script("status", FakeDeviceRealm.refusal(401, "CLOCK_SKEW", serverTimestamp: absurd))
            let (_, refused) = try await registrar().send(appId: Self.appId)
            XCTAssertEqual(refused.statusCode, 401, "\(absurd)")
        }
        XCTAssertEqual(realm.requests(to: "status").count, 5, "a server time out of any range is not learned")
        XCTAssertEqual(try stateStore.state(appId: Self.appId)?.clockOffsetMs, 500)

        realm.script("status", FakeDeviceRealm.refusal(503, "unavailable"))
        let (_, unavailable) = try await registrar().send(appId: Self.appId)
        XCTAssertEqual(unavailable.statusCode, 503)
        XCTAssertEqual(realm.requests(to: "status").count, 6, "a signed call is not retried: it may not be idempotent")
        XCTAssertEqual(sleeps.all, [])
    }

    func testOnlyARegisteredDeviceSigns() async throws {
        for registrar in [registrar()] {
            do {
                _ = try await registrar.send(appId: Self.appId)
                XCTFail("signed without a registration")
            } catch {
                XCTAssertEqual(error as? KeywardKitError, .notRegistered(appId: Self.appId))
            }
        }
        // A key gone from the store moves the registration to keyInvalid.
        let state = try await registered()
        try keyStore.deleteKey(named: state.keyName)
        do {
            _ = try await registrar().send(appId: Self.appId)
            XCTFail("signed without a key")
        } catch {
            XCTAssertEqual(error as? KeywardKitError, .noSuchKey(state.keyName))
        }
        XCTAssertEqual(try stateStore.state(appId: Self.appId)?.phase, .keyInvalid)
        XCTAssertEqual(realm.requests(to: "status").count, 0)
    }
}
