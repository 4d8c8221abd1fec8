// Tests: device key rotation switches keys only after the server's answer and settles unknown outcomes by asking.
import Crypto
import Foundation
import KeywardJOSE
import KeywardKit
import XCTest

/// `DeviceRegistrar.rotateKey`: the new key becomes current only after the server's 200; a refusal keeps the old
/// one; an unknown outcome is settled by asking the server which key it holds, also after a stop.
final class DeviceKeyRotationTests: DeviceRegistrarTestCase {
    func registered() async throws -> DeviceRegistrationState {
        try await registrar().registerDevice(appId: Self.appId).state
    }

    func testARotationSwitchesKeysAfterTheServersAnswer() async throws {
        let before = try await registered()
        let oldPoint = try publicPoint(before.keyName)

        let after = try await registrar().rotateKey(appId: Self.appId)
        XCTAssertEqual(after.phase, .registered)
        XCTAssertEqual(after.deviceId, before.deviceId)
        XCTAssertEqual(after.keyName, before.keyName, "the new key took the old one's name")
        XCTAssertNil(after.pendingKeyName)
        XCTAssertEqual(after.keyRotatedAt, Date(timeIntervalSince1970: 1_900_000_200))
        XCTAssertEqual(try stateStore.state(appId: Self.appId), after)
        let newPoint = try publicPoint(after.keyName)
        XCTAssertNotEqual(newPoint, oldPoint)
        XCTAssertEqual(realm.device(after.deviceId)?.publicKey, newPoint)
        XCTAssertNil(try keyStore.key(named: before.keyName + "-next"))

        let rotation = try XCTUnwrap(realm.requests(to: "rotate-key").first)
        let body = try body(rotation)
        XCTAssertEqual(Set(body.keys), ["challenge", "new_public_key", "proof"])
        XCTAssertEqual(body.string("new_public_key"), Data(newPoint).base64EncodedString())
        let challenge = try XCTUnwrap(body.string("challenge"))
        let proof = try P256.Signing.ECDSASignature(derRepresentation: XCTUnwrap(Data(base64Encoded: XCTUnwrap(body.string("proof")))))
        XCTAssertTrue(try P256.Signing.PublicKey(x963Representation: newPoint).isValidSignature(proof, for: Array(challenge.utf8)))
        // Signed by the old key: the fake verified it, and so does this test.
        let headers = rotation.headers
        let message = RequestSigner.message(
            method: "POST", target: rotation.path, timestamp: try XCTUnwrap(headers["x-keyward-timestamp"]), nonce: try XCTUnwrap(headers["x-keyward-nonce"]),
            body: Array(rotation.body)
        )
        let signature = try P256.Signing.ECDSASignature(derRepresentation: XCTUnwrap(Data(base64Encoded: XCTUnwrap(headers["x-keyward-signature"]))))
        XCTAssertTrue(try P256.Signing.PublicKey(x963Representation: oldPoint).isValidSignature(signature, for: message))

        let (_, response) = try await registrar().send(appId: Self.appId)
        XCTAssertEqual(response.statusCode, 200, "signed calls go on with the new key")
    }

    func testARefusedRotationKeepsTheOldKey() async throws {
        let before = try await registered()
        let oldPoint = try publicPoint(before.keyName)
        realm.script("rotate-key", FakeDeviceRealm.refusal(400, "INVALID_PROOF"))
        do {
            _ = try await registrar().rotateKey(appId: Self.appId)
            XCTFail("a refused rotation succeeded")
        } catch {
            assertRefused(error, status: 400, code: "INVALID_PROOF")
        }
        let state = try XCTUnwrap(try stateStore.state(appId: Self.appId))
        XCTAssertEqual(state.phase, .registered)
        XCTAssertNil(state.pendingKeyName)
        XCTAssertEqual(try publicPoint(state.keyName), oldPoint)
        XCTAssertNil(try keyStore.key(named: before.keyName + "-next"), "the refused key is deleted")
        XCTAssertEqual(sleeps.all, [])
        let (_, response) = try await registrar().send(appId: Self.appId)
        XCTAssertEqual(response.statusCode, 200)
    }

    func testAnUnknownOutcomeWithTheOldKeyHeldIsRetriedWithAFreshChallenge() async throws {
        let before = try await registered()
        realm.script("rotate-key", FakeDeviceRealm.refusal(503, "unavailable"))

        let after = try await registrar().rotateKey(appId: Self.appId)
        XCTAssertEqual(realm.requests(to: "rotate-key").count, 2)
        XCTAssertEqual(realm.requests(to: "status").count, 1, "asked which key the server holds before retrying")
        XCTAssertEqual(sleeps.all, [.milliseconds(2250)])
        let challenges = try realm.requests(to: "rotate-key").map(body).compactMap { $0.string("challenge") }
        XCTAssertEqual(Set(challenges).count, 2)
        XCTAssertEqual(realm.device(before.deviceId)?.publicKey, try publicPoint(after.keyName))
    }

    func testAnUnknownOutcomeAfterTheServerSwitchedKeepsTheNewKey() async throws {
        let before = try await registered()
        realm.loseAnswers("rotate-key")

        let after = try await registrar().rotateKey(appId: Self.appId)
        XCTAssertEqual(realm.requests(to: "rotate-key").count, 1, "no second rotation")
        XCTAssertEqual(realm.requests(to: "status").count, 2, "the old key is refused, the new one taken")
        XCTAssertEqual(after.phase, .registered)
        XCTAssertNil(after.pendingKeyName)
        XCTAssertEqual(realm.device(before.deviceId)?.publicKey, try publicPoint(after.keyName))
        XCTAssertNil(try keyStore.key(named: before.keyName + "-next"))
        XCTAssertEqual(sleeps.all, [])
    }

    func testARotationStoppedBeforeItsAnswerIsSettledByTheNextCall() async throws {
        // Stopped after the server switched: the next signed call finds the new key held and promotes it.
        let state = try await registered()
        var stopped = state
        try stopped.move(to: .registering)
        stopped.pendingKeyName = state.keyName + "-next"
        try stateStore.save(stopped)
        let next = try keyStore.createKey(named: state.keyName + "-next", algorithm: .es256)
        guard case .ec(_, let x, let y) = next.publicJWK.material else { return XCTFail() }
        realm.replaceKey(deviceId: state.deviceId, with: [0x04] + x + y)

        let (_, response) = try await registrar().send(appId: Self.appId)
        XCTAssertEqual(response.statusCode, 200)
        let settled = try XCTUnwrap(try stateStore.state(appId: Self.appId))
        XCTAssertEqual(settled.phase, .registered)
        XCTAssertNil(settled.pendingKeyName)
        XCTAssertEqual(try publicPoint(settled.keyName), [0x04] + x + y)

        // Stopped before the server heard of it: registerDevice finds the old key held and drops the staged one.
        var again = settled
        try again.move(to: .registering)
        again.pendingKeyName = settled.keyName + "-next"
        try stateStore.save(again)
        _ = try keyStore.createKey(named: settled.keyName + "-next", algorithm: .es256)
        let result = try await registrar().registerDevice(appId: Self.appId)
        XCTAssertTrue(result.alreadyRegistered)
        XCTAssertEqual(result.state.phase, .registered)
        XCTAssertEqual(try publicPoint(result.state.keyName), [0x04] + x + y)
        XCTAssertNil(try keyStore.key(named: settled.keyName + "-next"))
        XCTAssertEqual(realm.requests(to: "register").count, 1, "settled without registering again")
    }

    func testARotationWaitsForNothingElseForTheSameApp() async throws {
        do {
            _ = try await registrar().rotateKey(appId: Self.appId)
            XCTFail("rotated an unregistered device")
        } catch {
            XCTAssertEqual(error as? KeywardKitError, .notRegistered(appId: Self.appId))
        }

        // A rotation asked for while a registration of the app is under way is refused, not queued.
        let (entered, enter) = AsyncStream<Void>.makeStream()
        let (gate, open) = AsyncStream<Void>.makeStream()
        let attester = ClosureAttester { _ in
            enter.yield()
            var waiting = gate.makeAsyncIterator()
            _ = await waiting.next()
            return nil
        }
        let shared = registrar(attester: attester)
        let appId = Self.appId
        let registration = Task { try await shared.registerDevice(appId: appId) }
        var registering = entered.makeAsyncIterator()
        _ = await registering.next()
        do {
            _ = try await shared.rotateKey(appId: Self.appId)
            XCTFail("rotated during a registration")
        } catch {
            XCTAssertEqual(error as? KeywardKitError, .registrationInProgress(appId: Self.appId))
        }
        open.yield()
        let result = try await registration.value
        XCTAssertEqual(result.state.phase, .registered)
    }
}
