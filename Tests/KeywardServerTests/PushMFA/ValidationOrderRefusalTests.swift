// Tests: every refusal of push-MFA enrollment completion and challenge responses, in the original's order.
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// docs/PUSH-MFA-PROTOCOL.md §3.4 and §3.6: every 400/403/404 of `/enroll/complete` and `/respond`, in the original's messages.
final class ValidationOrderRefusalTests: XCTestCase {
    func testEnrollmentRefusals() async throws {
        try await TestServer.forEachEngine { server, client in
            let user = try await server.demoUser()
            let device = try TestDevice(server: server, userId: user.id)
            let enrollment = try await server.startEnrollment(user)
            let token = enrollment.enrollmentToken
            let other = try await server.runtime.accounts.users.createUser(realm: "demo", username: "other", password: "pw")
            let othersEnrollment = try await server.runtime.pushMFA.service.startEnrollment(realm: "demo", user: other)
            let (loginChallenge, _) = try await { () async throws -> (PushChallenge, String) in
                _ = try await server.enrolledDevice(client)
                return try await server.createdChallenge()
            }()
            let past = server.clock.now().timeIntervalSince1970 - 1
            let hsToken = try JWS.sign(headerBytes: Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8), payload: Array(#"{"sub":"x"}"#.utf8), key: try SigningKey.generate(.es256))
            var privateJWK = device.publicJWK
            privateJWK["d"] = "AAAA"
            let okpJWK: JSONObject = ["kty": "OKP", "crv": "Ed25519", "x": .string(Base64URL.encode([UInt8](repeating: 1, count: 32)))]
            let post = { (body: String?) async throws -> PushAnswer in try await client.push("/enroll/complete", method: .post, rawBody: body) }
            func enroll(_ overrides: JSONObject, signer: SigningKey? = nil, enrollmentToken: String? = nil) async throws -> PushAnswer {
                let jwt = try device.enrollmentJWT(for: enrollmentToken ?? token, overrides: overrides, signWith: signer)
                return try await client.push("/enroll/complete", method: .post, json: ["token": .string(jwt)])
            }

            let raw: [(String?, HTTPResponse.Status, String)] = [
                (nil, .badRequest, "Request body required"),
                ("{}", .badRequest, "Missing field: token"),
                (#"{"token": 5}"#, .badRequest, "Missing field: token"),
                (#"{"token": "nope"}"#, .badRequest, "Invalid enrollment token"),
                ("{\"token\": \"\(hsToken)\"}", .badRequest, "Unsupported enrollment token algorithm: HS256"),
                ("{\"token\": \"" + String(repeating: "a", count: 16385) + "\"}", .badRequest, "Field too long: token"),
                (#"{"token": "a", "token": "b"}"#, .badRequest, "Invalid JSON body: duplicate member \"token\""),
            ]
            for (body, status, message) in raw {
                let answer = try await post(body)
                XCTAssertEqual(answer.status, status, message)
                XCTAssertTrue(answer.error?.hasPrefix(message.components(separatedBy: ":").first!) ?? false, "\(message) vs \(answer.body)")
            }

            let claimCases: [(JSONObject, SigningKey?, String?, HTTPResponse.Status, String)] = [
                (["sub": .null], nil, nil, .badRequest, "Missing field: sub"),
                (["sub": "nobody"], nil, nil, .notFound, "User not found"),
                (["enrollmentId": "not-a-uuid"], nil, nil, .badRequest, "Invalid UUID field: enrollmentId"),
                (["enrollmentId": .string(UUID().uuidString)], nil, nil, .notFound, "Challenge not found"),
                (["enrollmentId": .string(loginChallenge.id)], nil, nil, .badRequest, "Challenge is not for enrollment"),
                (["enrollmentId": .string(othersEnrollment.challenge.id)], nil, nil, .forbidden, "Challenge does not belong to user"),
                (["exp": .number(past)], nil, nil, .badRequest, "enrollment token expired"),
                (["nonce": "AAAA"], nil, nil, .forbidden, "Nonce mismatch"),
                (["nonce": .null], nil, nil, .badRequest, "Missing field: nonce"),
                (["cnf": .null], nil, nil, .badRequest, "Enrollment token is missing cnf.jwk claim"),
                (["cnf": .object(["jwk": .object(privateJWK)])], nil, nil, .badRequest, "JWK must not contain private key parameters"),
                (["cnf": .object(["jwk": .object(okpJWK)])], nil, nil, .badRequest, "Unsupported key type in cnf.jwk: only RSA and EC keys are accepted"),
                (["cnf": .object(["jwk": .object(device.publicJWK.merging(["alg": "RS512"]) { $1 })])], nil, nil, .badRequest, "JWK algorithm mismatch"),
                (["deviceType": .null], nil, nil, .badRequest, "Missing field: deviceType"),
                (["deviceType": .string(String(repeating: "t", count: 65))], nil, nil, .badRequest, "Field too long: deviceType"),
                (["pushProviderId": .null, "pushProviderType": "fcm"], nil, nil, .badRequest, "pushProviderId required unless pushProviderType=none"),
                (["credentialId": .null], nil, nil, .badRequest, "Missing field: credentialId"),
                (["deviceId": .null], nil, nil, .badRequest, "Missing field: deviceId"),
                (["deviceId": "a\u{7}b"], nil, nil, .badRequest, "Invalid characters in field: deviceId"),
                (["deviceLabel": .string(String(repeating: "l", count: 129))], nil, nil, .badRequest, "Field too long: deviceLabel"),
                ([:], try SigningKey.generate(.rs256), nil, .forbidden, "Invalid enrollment token signature"),
            ]
            for (overrides, signer, otherToken, status, message) in claimCases {
                let answer = try await enroll(overrides, signer: signer, enrollmentToken: otherToken)
                XCTAssertEqual(answer.status, status, "\(message): \(answer.body)")
                XCTAssertEqual(answer.error, message)
            }
            // Nothing above consumed the challenge: the right token still enrolls, once.
            let ok = try await enroll([:])
            XCTAssertEqual(ok.status, .ok, ok.body)
            let again = try await enroll([:])
            XCTAssertEqual(again.status, .badRequest)
            XCTAssertEqual(again.error, "Challenge already resolved or expired")
            // Without an exp claim no expiry check is made (compatibility), and a blank push type becomes none.
            let loose = try TestDevice(server: server, userId: user.id)
            let looseEnrollment = try await server.startEnrollment(user)
            let looseJWT = try loose.enrollmentJWT(for: looseEnrollment.enrollmentToken, overrides: ["exp": .null, "pushProviderType": " ", "pushProviderId": .null])
            let accepted = try await client.push("/enroll/complete", method: .post, json: ["token": .string(looseJWT)])
            XCTAssertEqual(accepted.status, .ok, accepted.body)
            let stored = try await server.runtime.pushMFA.service.devices(realm: "demo", userId: user.id).first { $0.deviceId == loose.deviceId }
            XCTAssertEqual(stored?.pushProviderType, "none")
            XCTAssertEqual(stored?.deviceLabel, "Test phone")
        }
    }

    func testEnrollmentWithDPoPMustNameTheSameUserAndDevice() async throws {
        try await TestServer.forEachEngine { server, client in
            let user = try await server.demoUser()
            let device = try TestDevice(server: server, userId: user.id)
            let enrollment = try await server.startEnrollment(user)
            let accessToken = try await device.accessToken(client)
            let url = device.base + "/enroll/complete"
            let body: JSONObject = ["token": .string(try device.enrollmentJWT(for: enrollment.enrollmentToken))]
            for (claims, message) in [(["sub": JSONValue.string("someone")], "DPoP proof sub mismatch"), (["deviceId": "other-device"], "DPoP proof deviceId mismatch")] {
                let proof = try device.proof(method: "POST", url: url, accessToken: accessToken, extraClaims: claims)
                let answer = try await client.push("/enroll/complete", method: .post, headers: [.authorization: "DPoP " + accessToken, HTTPField.Name("DPoP")!: proof], json: body)
                XCTAssertEqual(answer.status, .forbidden)
                XCTAssertEqual(answer.error, message)
            }
            let foreign = try DPoPProof.make(key: try SigningKey.generate(.rs256), method: "POST", url: url, issuedAt: server.clock.now(), accessToken: accessToken, extraClaims: ["sub": .string(user.id), "deviceId": .string(device.deviceId)])
            let answer = try await client.push("/enroll/complete", method: .post, headers: [.authorization: "DPoP " + accessToken, HTTPField.Name("DPoP")!: foreign], json: body)
            XCTAssertEqual(answer.status, .forbidden)
            XCTAssertEqual(answer.error, "Invalid DPoP proof signature")
            // Only Authorization, no proof, DPoP not required: the token alone is checked.
            let tokenOnly = try await client.push("/enroll/complete", method: .post, headers: [.authorization: "DPoP garbage"], json: body)
            XCTAssertEqual(tokenOnly.status, .unauthorized)
        }
    }

    func testRespondRefusals() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.maxPendingChallenges = 5 }
            let (device, _) = try await server.enrolledDevice(client)
            let (challenge, _) = try await server.createdChallenge(session: "a")
            let other = try await server.runtime.accounts.users.createUser(realm: "demo", username: "other", password: "pw")
            let otherDevice = try TestDevice(server: server, userId: other.id)
            _ = try await otherDevice.enroll(client, enrollmentToken: try await server.runtime.pushMFA.service.startEnrollment(realm: "demo", user: other).enrollmentToken)
            guard case .created(let othersChallenge, _, _, _) = try await server.runtime.pushMFA.service.startLogin(realm: try await server.demoRealm(), user: other, clientId: nil, sessionId: "x") else { return XCTFail() }
            let enrollment = try await server.startEnrollment(try await server.demoUser())
            let path = "/login/challenges/\(challenge.id)/respond"
            func respond(_ body: JSONObject?, path target: String = path) async throws -> PushAnswer {
                try await device.call(client, .post, target, token: try await device.accessToken(client), json: body)
            }
            func jwt(_ overrides: JSONObject = [:], action: String? = "approve", signer: SigningKey? = nil) throws -> JSONObject {
                ["token": .string(try device.loginJWT(challengeId: challenge.id, action: action, overrides: overrides, signWith: signer))]
            }
            let past = server.clock.now().timeIntervalSince1970 - 1
            let hs = try JWS.sign(headerBytes: Array(#"{"alg":"HS256"}"#.utf8), payload: Array(#"{"cid":"x"}"#.utf8), key: try SigningKey.generate(.es256))
            let cases: [(JSONObject?, String, HTTPResponse.Status, String)] = [
                (nil, path, .badRequest, "Request body required"),
                (try jwt(), "/login/challenges/not-a-uuid/respond", .badRequest, "Invalid UUID field: cid"),
                (try jwt(), "/login/challenges/\(UUID().uuidString)/respond", .notFound, "Challenge not found"),
                (try jwt(), "/login/challenges/\(enrollment.challenge.id)/respond", .badRequest, "Challenge is not for login"),
                (try jwt(), "/login/challenges/\(othersChallenge.id)/respond", .forbidden, "Authentication token subject mismatch"),
                ([:], path, .badRequest, "Missing field: token"),
                (["token": "garbage"], path, .badRequest, "Invalid authentication token"),
                (["token": .string(hs)], path, .badRequest, "Unsupported authentication token algorithm: HS256"),
                (try jwt(["cid": .string(UUID().uuidString)]), path, .forbidden, "Challenge mismatch"),
                (try jwt(["cid": .null]), path, .forbidden, "Challenge mismatch"),
                (try jwt(signer: try SigningKey.generate(.rs256)), path, .forbidden, "Invalid authentication token signature"),
                (try jwt(signer: try SigningKey.generate(.es256)), path, .badRequest, "JWK algorithm mismatch"),
                (try jwt(["exp": .number(past)]), path, .badRequest, "authentication token expired"),
                (try jwt(["credId": .null]), path, .badRequest, "Missing field: credId"),
                (try jwt(["credId": "someone-else"]), path, .forbidden, "Authentication token credential mismatch"),
                (try jwt(action: "maybe"), path, .badRequest, "Unsupported action: maybe"),
            ]
            for (body, target, status, message) in cases {
                let answer = try await respond(body, path: target)
                XCTAssertEqual(answer.status, status, "\(message): \(answer.body)")
                XCTAssertEqual(answer.error, message)
            }
            let stillPending = try await server.runtime.pushMFA.service.challenge(id: challenge.id)
            XCTAssertEqual(stillPending?.status, .pending, "no refusal resolved the challenge")
            let events = try await server.runtime.audit.events(realm: "demo", limit: 500)
            XCTAssertEqual(events.filter { $0.type == .challengeResponseInvalid }.count, 1)
        }
    }

    /// Keyward closes the original's existence oracle: without valid device authentication, an unknown and a
    /// known challenge id get the same 401.
    func testRespondAuthenticatesBeforeRevealingWhetherAChallengeExists() async throws {
        try await TestServer.forEachEngine { server, client in
            _ = try await server.enrolledDevice(client)
            let (challenge, _) = try await server.createdChallenge()
            let known = try await client.push("/login/challenges/\(challenge.id)/respond", method: .post, json: ["token": "x"])
            let unknown = try await client.push("/login/challenges/\(UUID().uuidString)/respond", method: .post, json: ["token": "x"])
            XCTAssertEqual(known.status, .unauthorized)
            XCTAssertEqual(unknown.status, .unauthorized)
            XCTAssertEqual(known.body, unknown.body)
        }
    }
}
