// Tests: push-MFA enrollment for every key type: token claims, byte-exact nonce, request_uri, re-enrollment, DPoP.
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class EnrollmentTests: XCTestCase {
    /// RSA and every EC curve, with and without DPoP on enrollment, then a login approved with that key.
    func testEnrollEveryKeyTypeThenApprove() async throws {
        try await TestServer.forEachEngine { server, client in
            let user = try await server.demoUser()
            for (algorithm, dpop) in [(JWSAlgorithm.rs256, false), (.rs512, true), (.es256, true), (.es384, false), (.es512, true)] {
                let device = try TestDevice(server: server, userId: user.id, algorithm: algorithm)
                let enrollment = try await server.startEnrollment(user)
                let enrolled = try await device.enroll(client, enrollmentToken: enrollment.enrollmentToken, dpop: dpop)
                XCTAssertEqual(enrolled.status, .ok, "\(algorithm): \(enrolled.body)")
                XCTAssertEqual(enrolled.json, ["status": "enrolled"])
                let stored = try await server.runtime.pushMFA.service.challenge(id: enrollment.challenge.id)
                XCTAssertEqual(stored?.status, .approved)

                let token = try await device.accessToken(client)
                let (challenge, _) = try await server.createdChallenge(session: "session-\(algorithm)")
                let answer = try await device.respond(client, token: token, challengeId: challenge.id)
                XCTAssertEqual(answer.status, .ok, "\(algorithm): \(answer.body)")
                XCTAssertEqual(answer.json, ["status": "approved"])
            }
            let devices = try await server.runtime.pushMFA.service.devices(realm: "demo", userId: user.id)
            XCTAssertEqual(devices.count, 5)
            let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            XCTAssertTrue(metrics.contains(#"keyward_security_events_total{type="EnrollmentCompleted"} 5"#), metrics)
            XCTAssertTrue(metrics.contains(#"keyward_security_events_total{type="ChallengeAccepted"} 5"#))
        }
    }

    /// The enrollment token carries exactly the claims of docs/PUSH-MFA-PROTOCOL.md §4.1; the nonce is 32 bytes of standard base64.
    func testEnrollmentTokenClaims() async throws {
        try await TestServer.forEachEngine { server, client in
            let user = try await server.demoUser()
            let enrollment = try await server.startEnrollment(user)
            let jws = try JWS.parse(enrollment.enrollmentToken)
            XCTAssertEqual(jws.header["typ"], "JWT")
            XCTAssertNotNil(jws.header["kid"]?.stringValue)
            let claims = try jws.claims()
            XCTAssertEqual(Set(claims.keys), ["iss", "aud", "sub", "username", "realm", "enrollmentId", "nonce", "exp", "iat", "typ"])
            XCTAssertEqual(claims["iss"]?.stringValue, TestServer.publicURL + "/realms/demo")
            XCTAssertEqual(claims["aud"], "demo")
            XCTAssertEqual(claims["typ"], "push-enroll-challenge")
            XCTAssertEqual(claims["sub"]?.stringValue, user.id)
            XCTAssertEqual(claims["username"], "test")
            XCTAssertEqual(claims["exp"]?.numberValue, enrollment.challenge.expiresAt.timeIntervalSince1970.rounded(.down))
            XCTAssertEqual(enrollment.challenge.expiresAt.timeIntervalSince(server.clock.now()), 240, accuracy: 1)
            let nonce = try XCTUnwrap(claims["nonce"]?.stringValue)
            XCTAssertEqual(nonce.count, 43)
            XCTAssertFalse(nonce.contains("="))
            XCTAssertEqual(Data(base64Encoded: nonce + "=")?.count, 32)
            XCTAssertTrue(enrollment.link.hasPrefix("my-secure://enroll?token="))
            // Verifies against the published JWKS.
            let (_, jwks) = try await client.execute(uri: "/realms/demo/protocol/openid-connect/certs", method: .get) { ($0.status, Array($0.body.readableBytesView)) }
            let keySet = try JWKSet(json: jwks)
            _ = try JWTVerifier.verify(enrollment.enrollmentToken, policy: .init(
                allowedAlgorithms: [.es256], keys: .set(keySet), issuer: TestServer.publicURL + "/realms/demo", audience: "demo"
            ), now: server.clock.now())
        }
    }

    /// A nonce with `+` and `/` must be echoed byte for byte; a base64url re-encoding is a different nonce.
    func testNonceIsComparedByteForByte() async throws {
        try await TestServer.forEachEngine { server, client in
            let user = try await server.demoUser()
            var enrollment = try await server.startEnrollment(user)
            while !enrollment.challenge.nonce.contains(where: { $0 == "+" || $0 == "/" }) {
                enrollment = try await server.startEnrollment(user)
            }
            let device = try TestDevice(server: server, userId: user.id)
            let urlSafe = enrollment.challenge.nonce.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            let refused = try await device.enroll(client, enrollmentToken: enrollment.enrollmentToken, overrides: ["nonce": .string(urlSafe)])
            XCTAssertEqual(refused.status, .forbidden)
            XCTAssertEqual(refused.error, "Nonce mismatch")
            let accepted = try await device.enroll(client, enrollmentToken: enrollment.enrollmentToken)
            XCTAssertEqual(accepted.status, .ok, accepted.body)
        }
    }

    /// request_uri handles: reusable until they expire, each fetch a freshly signed token, 404 once resolved.
    func testRequestURIEnrollment() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.enrollmentUseRequestUri = true; $0.enrollmentAppUniversalLink = "my-secure://enroll" }
            let user = try await server.demoUser()
            let enrollment = try await server.startEnrollment(user)
            let requestURI = try XCTUnwrap(enrollment.requestURI)
            XCTAssertEqual(enrollment.link, "my-secure://enroll?request_uri=" + requestURI.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-._~")))!)
            let path = String(requestURI.dropFirst((TestServer.publicURL + "/realms/demo/push-mfa").count))
            let first = try await client.push(path, method: .get)
            XCTAssertEqual(first.status, .ok)
            XCTAssertEqual(first.headers[.contentType], "application/jwt")
            XCTAssertEqual(first.headers[.cacheControl], "no-store")
            server.clock.advance(by: 2)
            let second = try await client.push(path, method: .get)
            XCTAssertEqual(second.status, .ok)
            XCTAssertNotEqual(first.body, second.body, "each fetch is freshly signed")
            XCTAssertEqual(try JWS.parse(first.body).claims()["exp"], try JWS.parse(second.body).claims()["exp"])

            let device = try TestDevice(server: server, userId: user.id)
            let enrolled = try await device.enroll(client, enrollmentToken: second.body)
            XCTAssertEqual(enrolled.status, .ok, enrolled.body)
            let after = try await client.push(path, method: .get)
            XCTAssertEqual(after.status, .notFound)
            XCTAssertEqual(after.error, "Enrollment request not found")
            let malformed = try await client.push("/enroll/request-token/not-a-uuid", method: .get)
            XCTAssertEqual(malformed.status, .badRequest)
            XCTAssertEqual(malformed.error, "Invalid UUID field: requestHandle")
            let unknown = try await client.push("/enroll/request-token/\(UUID().uuidString)", method: .get)
            XCTAssertEqual(unknown.status, .notFound)
        }
    }

    /// Re-enrolling the same deviceId replaces the old credential: one key per device, never an ambiguous pick.
    func testReenrollingADeviceReplacesItsCredential() async throws {
        try await TestServer.forEachEngine { server, client in
            let user = try await server.demoUser()
            let first = try TestDevice(server: server, userId: user.id, deviceId: "phone-1")
            _ = try await first.enroll(client, enrollmentToken: try await server.startEnrollment(user).enrollmentToken)
            let second = try TestDevice(server: server, userId: user.id, algorithm: .es256, deviceId: "phone-1")
            let answer = try await second.enroll(client, enrollmentToken: try await server.startEnrollment(user).enrollmentToken)
            XCTAssertEqual(answer.status, .ok, answer.body)
            let devices = try await server.runtime.pushMFA.service.devices(realm: "demo", userId: user.id)
            XCTAssertEqual(devices.count, 1)
            XCTAssertEqual(try JWK(jsonString: devices[0].publicKeyJWK).thumbprint(), second.key.publicJWK.thumbprint())
        }
    }

    /// With `requireDpopForEnrollment` a bare enrollment is refused; a DPoP header is verified whenever present.
    func testDPoPRequiredForEnrollmentWhenConfigured() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.requireDpopForEnrollment = true }
            let user = try await server.demoUser()
            let device = try TestDevice(server: server, userId: user.id)
            let enrollment = try await server.startEnrollment(user)
            let bare = try await device.enroll(client, enrollmentToken: enrollment.enrollmentToken)
            XCTAssertEqual(bare.status, .unauthorized)
            XCTAssertEqual(bare.error, "HTTP 401 Unauthorized")
            XCTAssertEqual(bare.headers[.wwwAuthenticate], "DPoP error_description=\"DPoP access token required\"")
            let withProof = try await device.enroll(client, enrollmentToken: enrollment.enrollmentToken, dpop: true)
            XCTAssertEqual(withProof.status, .ok, withProof.body)
        }
    }
}
