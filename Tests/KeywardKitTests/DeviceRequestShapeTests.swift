// Tests: the exact enrollment JWT, DPoP proofs and key-rotation requests PushMFAClient sends.
import Foundation
import KeywardJOSE
import KeywardKit
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The exact requests PushMFAClient sends (docs/PUSH-MFA-PROTOCOL.md §3.2, §3.4, §4.2, §10), captured in-process: the device
/// enrollment JWT, the DPoP proofs with `sub` + `deviceId`, and a rotation proved by both keys.
final class DeviceRequestShapeTests: XCTestCase, FakePushRealm {
    func testDeviceEnrollmentJWTAndProofs() async throws {
        let recorder = Recorder()
        let spec = try DeviceKeySpec(keyType: nil, curve: nil, alg: nil)
        let device = try await enroll(recorder, key: try SigningKey.generate(spec.algorithm))
        let key = device.key
        XCTAssertEqual(key.algorithm, .rs256, "the original's default")
        let thumbprint = key.publicJWK.thumbprint()

        let complete = try XCTUnwrap(recorder.requests("POST", "/push-mfa/enroll/complete").first)
        let body = try Self.body(complete)
        XCTAssertEqual(Set(body.keys), ["token"])
        let jwt = try XCTUnwrap(body["token"]?.stringValue)

        // Signed by the device key; the key travels in cnf.jwk, public members only, with alg, use and kid.
        let claims = try JWS.parse(jwt).claims()
        let cnf = try XCTUnwrap(claims.object("cnf")?.object("jwk"))
        for member in ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] { XCTAssertNil(cnf[member], member) }
        XCTAssertEqual(cnf["alg"], "RS256")
        XCTAssertEqual(cnf["use"], "sig")
        XCTAssertEqual(cnf["kid"]?.stringValue, thumbprint)
        let cnfKey = try JWK(json: cnf)
        XCTAssertEqual(cnfKey.thumbprint(), thumbprint)
        let enrollment = try verified(jwt, key: cnfKey)
        XCTAssertEqual(enrollment.header["typ"], "JWT")
        XCTAssertEqual(enrollment.header["kid"]?.stringValue, thumbprint)
        XCTAssertEqual(enrollment.header["alg"], "RS256")

        XCTAssertEqual(claims["enrollmentId"], "4c8d7d0e-3a55-4f7e-9d7a-1b2c3d4e5f60")
        XCTAssertEqual(claims["nonce"]?.stringValue, nonce, "echoed byte for byte, + and / intact")
        XCTAssertEqual(claims["sub"], "user-1")
        XCTAssertEqual(claims["deviceType"], "linux")
        XCTAssertEqual(claims["pushProviderType"], "log")
        XCTAssertEqual(claims["pushProviderId"], "push-token-1")
        XCTAssertEqual(claims["deviceLabel"], "Test laptop")
        XCTAssertEqual(claims["credentialId"]?.stringValue, device.state.credentialId)
        XCTAssertEqual(claims["deviceId"]?.stringValue, device.state.deviceId)
        XCTAssertNotEqual(device.state.credentialId, device.state.deviceId)
        XCTAssertEqual(claims["iat"]?.numberValue, now.timeIntervalSince1970)
        XCTAssertEqual(claims["exp"]?.numberValue, now.timeIntervalSince1970 + 300)

        // DPoP on the enrollment: the same key, ath of the token, and the extension's sub + deviceId.
        XCTAssertEqual(complete.value(forHTTPHeaderField: "Authorization"), "DPoP at-1")
        let proof = try verified(try XCTUnwrap(complete.value(forHTTPHeaderField: "DPoP")), key: key.publicJWK, type: "dpop+jwt")
        XCTAssertEqual(try JWK(json: try XCTUnwrap(proof.header.object("jwk"))).thumbprint(), thumbprint)
        XCTAssertEqual(proof.claims["htm"], "POST")
        XCTAssertEqual(proof.claims["htu"]?.stringValue, issuer + "/push-mfa/enroll/complete")
        XCTAssertEqual(proof.claims["ath"]?.stringValue, DPoPProof.accessTokenHash("at-1"))
        XCTAssertEqual(proof.claims["sub"], "user-1")
        XCTAssertEqual(proof.claims["deviceId"]?.stringValue, device.state.deviceId)

        // The token request's proof carries sub + deviceId too, and no ath.
        let tokenRequest = try XCTUnwrap(recorder.requests("POST", "/protocol/openid-connect/token").first)
        let tokenProof = try verified(try XCTUnwrap(tokenRequest.value(forHTTPHeaderField: "DPoP")), key: key.publicJWK, type: "dpop+jwt")
        XCTAssertEqual(tokenProof.claims["htu"]?.stringValue, issuer + "/protocol/openid-connect/token")
        XCTAssertNil(tokenProof.claims["ath"])
        XCTAssertEqual(tokenProof.claims["sub"], "user-1")
        XCTAssertEqual(tokenProof.claims["deviceId"]?.stringValue, device.state.deviceId)
    }

    func testRotationIsAuthenticatedByTheOldKeyAndProvedByTheNew() async throws {
        let recorder = Recorder()
        let device = try await enroll(recorder, key: try SigningKey.generate(.es384))
        let oldKey = device.key
        let rotated = try await device.rotateKey(to: try SigningKey.generate(.es256))
        let newKey = rotated.key
        XCTAssertEqual(newKey.algorithm, .es256)
        XCTAssertEqual(rotated.state.keyAlgorithm, "ES256")
        XCTAssertNotEqual(newKey.publicJWK.thumbprint(), oldKey.publicJWK.thumbprint())

        let request = try XCTUnwrap(recorder.requests("PUT", "/push-mfa/device/rotate-key").first)
        let dpop = try verified(try XCTUnwrap(request.value(forHTTPHeaderField: "DPoP")), key: oldKey.publicJWK, type: "dpop+jwt")
        XCTAssertEqual(dpop.claims["htm"], "PUT")
        XCTAssertEqual(dpop.claims["htu"]?.stringValue, issuer + "/push-mfa/device/rotate-key")
        XCTAssertEqual(dpop.claims["sub"], "user-1")

        let body = try Self.body(request)
        XCTAssertEqual(Set(body.keys), ["publicKeyJwk", "proofOfPossession"])
        let jwk = try XCTUnwrap(body.object("publicKeyJwk"))
        XCTAssertNil(jwk["d"])
        XCTAssertEqual(jwk["alg"], "ES256", "the server requires alg on rotation")
        XCTAssertEqual(try JWK(json: jwk).thumbprint(), newKey.publicJWK.thumbprint())

        let possession = try verified(try XCTUnwrap(body["proofOfPossession"]?.stringValue), key: newKey.publicJWK, type: "keyward-rotation+jwt")
        XCTAssertEqual(possession.claims["sub"], "user-1")
        XCTAssertEqual(possession.claims["deviceId"]?.stringValue, device.state.deviceId)
        XCTAssertEqual(possession.claims["previousJkt"]?.stringValue, oldKey.publicJWK.thumbprint())
        XCTAssertEqual(possession.claims["iat"]?.numberValue, now.timeIntervalSince1970)
        XCTAssertNotNil(possession.claims["jti"]?.stringValue)
        XCTAssertThrowsError(try verified(try XCTUnwrap(body["proofOfPossession"]?.stringValue), key: oldKey.publicJWK), "not signed by the old key")
    }

    func testRotationToAKeyThePushAPIRefusesSendsNothing() async throws {
        let recorder = Recorder()
        let device = try await enroll(recorder, key: try SigningKey.generate(.es256))
        do {
            _ = try await device.rotateKey(to: try SigningKey.generate(.edDSA))
            XCTFail("rotated to EdDSA")
        } catch let error as KeywardKitError {
            guard case .invalidOption("alg", _) = error else { return XCTFail("\(error)") }
        }
        XCTAssertTrue(recorder.requests("PUT", "/push-mfa/device/rotate-key").isEmpty)
    }
}
