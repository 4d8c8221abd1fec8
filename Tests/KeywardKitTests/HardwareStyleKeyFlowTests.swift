// Tests: PushMFAClient with a store-made key it cannot see inside: enroll, approve and rotate all verify.
import Foundation
import KeywardJOSE
import KeywardKit
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// PushMFAClient with a key it cannot see inside (`HardwareStyleSigner`, made by a store that generates its own
/// keys like the Secure Enclave): enrollment, DPoP, an approval and a rotation through the store all produce tokens
/// KeywardJOSE's verifiers accept, and a rotation keeps or drops the new key according to the server's answer.
final class HardwareStyleKeyFlowTests: XCTestCase, FakePushRealm {
    func dpopVerified(_ request: URLRequest, thumbprint: String) async throws -> DPoPVerifier.Verified {
        let url = try XCTUnwrap(request.url)
        var components = try XCTUnwrap(URLComponents(url: url, resolvingAgainstBaseURL: false))
        components.query = nil
        return try await DPoPVerifier(replayCache: MemoryReplayCache()).verify(
            proof: try XCTUnwrap(request.value(forHTTPHeaderField: "DPoP")), method: try XCTUnwrap(request.httpMethod),
            url: try XCTUnwrap(components.string), accessToken: "at-1", expectedThumbprint: thumbprint, now: now
        )
    }

    func testSignaturesFromAForeignSignerVerify() async throws {
        let signer = try HardwareStyleSigner()
        let jwt = try JWS.sign(header: ["typ": "JWT"], claims: ["sub": "device"], key: signer)
        XCTAssertEqual(try JWS.parse(jwt).signature.count, 64, "r || s, not DER")
        let verified = try verified(jwt, key: signer.publicJWK)
        XCTAssertEqual(verified.claims["sub"], "device")

        let now = now
        let dpop = DPoPSigner(key: signer, clock: { now })
        XCTAssertEqual(dpop.thumbprint, signer.publicJWK.thumbprint())
        let proof = try dpop.proof(method: "POST", url: "https://api.example.com/things", accessToken: "at-1")
        let accepted = try await DPoPVerifier(replayCache: MemoryReplayCache()).verify(
            proof: proof, method: "POST", url: "https://api.example.com/things", accessToken: "at-1", expectedThumbprint: dpop.thumbprint, now: now
        )
        XCTAssertEqual(accepted.thumbprint, dpop.thumbprint)
    }

    func testEnrollApproveAndRotateWithAStoreMadeKey() async throws {
        let recorder = Recorder()
        let store = HardwareStyleKeyStore()
        let key = try store.createKey(named: "push-mfa", algorithm: .es256)
        XCTAssertFalse(key is SigningKey)
        let thumbprint = key.publicJWK.thumbprint()
        let device = try await enroll(recorder, key: key)

        // Enrollment: cnf.jwk is the store's key and the JWT verifies with it; the DPoP proof passes the verifier.
        let complete = try XCTUnwrap(recorder.requests("POST", "/push-mfa/enroll/complete").first)
        let enrollment = try XCTUnwrap(try Self.body(complete)["token"]?.stringValue)
        let cnf = try JWK(json: try XCTUnwrap(try JWS.parse(enrollment).claims().object("cnf")?.object("jwk")))
        XCTAssertEqual(cnf.thumbprint(), thumbprint)
        XCTAssertEqual(try verified(enrollment, key: cnf).header["alg"], "ES256")
        _ = try await dpopVerified(complete, thumbprint: thumbprint)

        // Approval: the answer JWT and its DPoP proof, both by the store's key.
        let cid = UUID().uuidString.lowercased()
        let status = try await device.respond(challengeId: cid, action: .approve, userVerification: "42")
        XCTAssertEqual(status, "approved")
        let respond = try XCTUnwrap(recorder.requests("POST", "/push-mfa/login/challenges/\(cid)/respond").first)
        let answer = try verified(try XCTUnwrap(try Self.body(respond)["token"]?.stringValue), key: key.publicJWK)
        XCTAssertEqual(answer.header["kid"]?.stringValue, thumbprint)
        XCTAssertEqual(answer.claims["cid"]?.stringValue, cid)
        XCTAssertEqual(answer.claims["action"], "approve")
        XCTAssertEqual(answer.claims["userVerification"], "42")
        let respondProof = try await dpopVerified(respond, thumbprint: thumbprint)
        XCTAssertEqual(respondProof.claims["deviceId"]?.stringValue, device.state.deviceId)

        // Rotation through the store: the new key is made by the store, proves itself, and is promoted.
        let rotated = try await device.rotateKey(to: try DeviceKeySpec(algorithm: .es256), in: store, keyName: "push-mfa", nextKeyName: "push-mfa-next")
        let newThumbprint = rotated.key.publicJWK.thumbprint()
        XCTAssertNotEqual(newThumbprint, thumbprint)
        XCTAssertEqual(store.names, ["push-mfa"], "the staging name is gone")
        XCTAssertEqual(try store.key(named: "push-mfa")?.publicJWK.thumbprint(), newThumbprint)
        let rotation = try XCTUnwrap(recorder.requests("PUT", "/push-mfa/device/rotate-key").first)
        _ = try await dpopVerified(rotation, thumbprint: thumbprint)
        let possession = try XCTUnwrap(try Self.body(rotation)["proofOfPossession"]?.stringValue)
        XCTAssertEqual(try verified(possession, key: rotated.key.publicJWK, type: "keyward-rotation+jwt").claims["previousJkt"]?.stringValue, thumbprint)
    }

    func testRefusedRotationDropsOnlyTheNewKey() async throws {
        let store = HardwareStyleKeyStore()
        let key = try store.createKey(named: "push-mfa", algorithm: .es256)
        let device = try await enroll(Recorder(), key: key, rotationStatus: 403)
        do {
            _ = try await device.rotateKey(to: try DeviceKeySpec(algorithm: .es256), in: store, keyName: "push-mfa", nextKeyName: "push-mfa-next")
            XCTFail("rotated although the server refused")
        } catch KeywardKitError.server(let status, _, _) {
            XCTAssertEqual(status, 403)
        }
        XCTAssertEqual(store.names, ["push-mfa"])
        XCTAssertEqual(try store.key(named: "push-mfa")?.publicJWK.thumbprint(), key.publicJWK.thumbprint(), "the current key is untouched")
    }

    func testRotationWithoutAClearAnswerKeepsTheNewKey() async throws {
        let store = HardwareStyleKeyStore()
        let key = try store.createKey(named: "push-mfa", algorithm: .es256)
        let device = try await enroll(Recorder(), key: key, rotationStatus: 502)
        do {
            _ = try await device.rotateKey(to: try DeviceKeySpec(algorithm: .es256), in: store, keyName: "push-mfa", nextKeyName: "push-mfa-next")
            XCTFail("rotated on a 502")
        } catch KeywardKitError.server(let status, _, _) {
            XCTAssertEqual(status, 502)
        }
        // A proxy's 502 may hide a rotation the server finished: then the staged key is the only one that works.
        XCTAssertEqual(store.names, ["push-mfa", "push-mfa-next"])
        XCTAssertEqual(try store.key(named: "push-mfa")?.publicJWK.thumbprint(), key.publicJWK.thumbprint())
    }

    func testEnrollingAKeyThePushAPIRefusesSendsNothing() async throws {
        let recorder = Recorder()
        do {
            _ = try await enroll(recorder, key: try SigningKey.generate(.edDSA))
            XCTFail("enrolled an EdDSA key")
        } catch KeywardKitError.invalidOption(let option, _) {
            XCTAssertEqual(option, "alg")
        }
        XCTAssertTrue(recorder.requests("POST", "/push-mfa/enroll/complete").isEmpty)
        XCTAssertTrue(recorder.requests("POST", "/protocol/openid-connect/token").isEmpty)
    }
}
