// Tests: PushMFAClient's parts: enrollment link forms, key specs, enrollment token checks, a private state file.
import Foundation
import KeywardJOSE
@testable import KeywardKit
import XCTest

final class PushMFAClientUnitTests: XCTestCase {
    let jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"

    func testEnrollmentLinkForms() throws {
        XCTAssertEqual(try EnrollmentLink.parse(jwt), .token(jwt))
        XCTAssertEqual(try EnrollmentLink.parse("  \(jwt)\n"), .token(jwt))
        XCTAssertEqual(try EnrollmentLink.parse("my-secure://enroll?token=\(jwt)"), .token(jwt))
        XCTAssertEqual(try EnrollmentLink.parse("other-app://x/y?a=1&token=\(jwt)"), .token(jwt))
        let requestURI = "https://id.example.com/realms/demo/push-mfa/enroll/request-token/9f0c7a52-6a55-4d1e-a0a4-2c1a5d0e7b11"
        let encoded = requestURI.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        XCTAssertEqual(try EnrollmentLink.parse("my-secure://enroll?request_uri=\(encoded)"), .requestURI(URL(string: requestURI)!))
        XCTAssertEqual(try EnrollmentLink.parse(requestURI), .requestURI(URL(string: requestURI)!))
        XCTAssertEqual(try EnrollmentLink.parse("my-secure://confirm?token=\(jwt)"), .token(jwt))
        for bad in ["", "hello", "my-secure://enroll?token=not-a-jwt", "my-secure://enroll?request_uri=file%3A%2F%2F%2Fetc%2Fpasswd", "ftp://x/y", "a.b"] {
            XCTAssertThrowsError(try EnrollmentLink.parse(bad), bad)
        }
    }

    func testKeySpecCombinations() throws {
        XCTAssertEqual(try DeviceKeySpec(keyType: nil, curve: nil, alg: nil).algorithm, .rs256, "RSA/RS256 like the original's demo clients")
        XCTAssertEqual(try DeviceKeySpec(keyType: "RSA", curve: nil, alg: "RS512").algorithm, .rs512)
        XCTAssertEqual(try DeviceKeySpec(keyType: "EC", curve: nil, alg: nil).algorithm, .es256)
        XCTAssertEqual(try DeviceKeySpec(keyType: "EC", curve: "P-384", alg: nil).algorithm, .es384)
        XCTAssertEqual(try DeviceKeySpec(keyType: nil, curve: "P-521", alg: "ES512").algorithm, .es512)
        XCTAssertEqual(try DeviceKeySpec(keyType: nil, curve: nil, alg: "ES384").algorithm, .es384)
        let refusals: [(String?, String?, String?, String)] = [
            ("RSA", "P-256", nil, "curve"), ("RSA", nil, "ES256", "alg"), ("EC", "P-256", "ES384", "alg"), ("EC", "P-192", nil, "curve"),
            ("DSA", nil, nil, "key-type"), ("RSA", nil, "PS256", "alg"), ("EC", nil, "EdDSA", "alg"),
        ]
        for (type, curve, alg, option) in refusals {
            XCTAssertThrowsError(try DeviceKeySpec(keyType: type, curve: curve, alg: alg)) { error in
                guard case KeywardKitError.invalidOption(let named, _) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(named, option)
            }
        }
        let key = try SigningKey.generate(.es256)
        let jwk = DeviceKeySpec.publicJWK(of: key)
        XCTAssertEqual(jwk["alg"], "ES256")
        XCTAssertEqual(jwk["use"], "sig")
        XCTAssertNil(jwk["d"], "no private members")
        XCTAssertEqual(try JWK(json: jwk).thumbprint(), key.publicJWK.thumbprint())
    }

    func testEnrollmentTokenVerification() async throws {
        let realmKey = try SigningKey.generate(.es256)
        var published = realmKey.publicJWK.requiredMembers
        published["kid"] = "k1"
        let keys = JWKSet(keys: [try JWK(json: published)])
        let issuer = "https://id.example.com/realms/demo"
        let now = Date()
        let verifier = RealmTokenVerifier(issuer: issuer, clock: { now }) { keys }
        func token(_ change: (inout JSONObject) -> Void = { _ in }, key: SigningKey? = nil, kid: String = "k1") throws -> String {
            var claims: JSONObject = [
                "iss": .string(issuer), "aud": "demo", "sub": "u1", "enrollmentId": "e1", "nonce": "n+/x", "typ": "push-enroll-challenge",
                "iat": .number(now.timeIntervalSince1970), "exp": .number(now.timeIntervalSince1970 + 240),
            ]
            change(&claims)
            return try JWS.sign(header: ["kid": .string(kid), "typ": "JWT"], claims: claims, key: key ?? realmKey)
        }
        let claims = try await verifier.verifyEnrollmentToken(try token())
        XCTAssertEqual(claims["nonce"], "n+/x")
        let refusals: [String] = [
            try token { $0["iss"] = "https://evil.example/realms/demo" },
            try token { $0["aud"] = "other" },
            try token { $0["exp"] = .number(now.timeIntervalSince1970 - 60) },
            try token { $0["typ"] = "something-else" },
            try token(key: try SigningKey.generate(.es256)),
            try token(kid: "unknown"),
        ]
        for (index, bad) in refusals.enumerated() {
            do {
                _ = try await verifier.verifyEnrollmentToken(bad)
                XCTFail("refusal \(index) accepted")
            } catch let error as KeywardKitError {
                guard case .untrustedToken = error else { return XCTFail("\(error)") }
            }
        }
        XCTAssertEqual(verifier.realm, "demo")
        XCTAssertNil(PushMFAClient.trustableIssuer("http://id.example.com/realms/demo"), "plain http only on loopback")
        XCTAssertEqual(PushMFAClient.trustableIssuer("http://127.0.0.1:8080/realms/demo"), "http://127.0.0.1:8080/realms/demo")
    }

    func testDeviceStateFileIsPrivate() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kk-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = DeviceState(issuer: "i", realm: "r", userId: "u", username: "n", credentialId: "c", deviceId: "d", deviceType: "t", deviceLabel: "l", pushProviderId: "p", pushProviderType: "log", keyAlgorithm: "ES256")
        try state.save(to: directory)
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("device.json").path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        XCTAssertEqual(try DeviceState.load(from: directory), state)
    }
}
