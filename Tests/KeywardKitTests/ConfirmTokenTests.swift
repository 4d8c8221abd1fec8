// Tests: a pushed confirm token names its challenge only once proven the realm's, unexpired, and this device's.
import Foundation
import KeywardJOSE
import KeywardKit
import XCTest

/// A pushed confirm token names the challenge only after it proves to be the realm's, unexpired, and for this
/// device's credential (docs/PUSH-MFA-PROTOCOL.md §4.3: credId, cid, typ 1, ver 1, iss, iat, exp; no aud).
final class ConfirmTokenTests: XCTestCase {
    let issuer = "https://id.example.com/realms/demo"
    let now = Date(timeIntervalSince1970: 1_900_000_000)
    let cid = "0d9e6a3c-8f1b-4b8e-9a51-77c2c3f4d5e6"

    func device(realmKey: SigningKey) throws -> PushMFAClient {
        var published = realmKey.publicJWK.jsonObject
        published["kid"] = "realm-1"
        let jwks = Data(StrictJSON.serialize(["keys": .array([.object(published)])]))
        let session = StubURLProtocol.session { request in
            request.url?.path.hasSuffix("/protocol/openid-connect/certs") == true
                ? (200, ["Content-Type": "application/json"], jwks) : (404, [:], Data())
        }
        let state = DeviceState(
            issuer: issuer, realm: "demo", userId: "user-1", username: "test", credentialId: "cred-1", deviceId: "device-1",
            deviceType: "linux", deviceLabel: "l", pushProviderId: "p", pushProviderType: "log", keyAlgorithm: "ES256"
        )
        let now = now
        return PushMFAClient(state: state, key: try SigningKey.generate(.es256), clientId: "push-device-client", clientSecret: "s", session: session, clock: { now })
    }

    func confirmToken(_ realmKey: SigningKey, kid: String = "realm-1", change: (inout JSONObject) -> Void = { _ in }) throws -> String {
        let seconds = now.timeIntervalSince1970
        var claims: JSONObject = [
            "iss": .string(issuer), "credId": "cred-1", "cid": .string(cid), "typ": 1, "ver": 1,
            "iat": .number(seconds), "exp": .number(seconds + 240),
        ]
        change(&claims)
        return try JWS.sign(header: ["kid": .string(kid), "typ": "JWT"], claims: claims, key: realmKey)
    }

    func testValidConfirmTokenGivesTheChallenge() async throws {
        let realmKey = try SigningKey.generate(.rs256)
        let client = try device(realmKey: realmKey)
        let found = try await client.challengeId(fromConfirmToken: try confirmToken(realmKey))
        XCTAssertEqual(found, cid)
    }

    func testRefusals() async throws {
        let realmKey = try SigningKey.generate(.es256)
        let client = try device(realmKey: realmKey)
        let seconds = now.timeIntervalSince1970
        let refusals: [(String, String)] = [
            ("another device's credential", try confirmToken(realmKey) { $0["credId"] = "cred-2" }),
            ("another issuer", try confirmToken(realmKey) { $0["iss"] = "https://evil.example/realms/demo" }),
            ("expired", try confirmToken(realmKey) { $0["exp"] = .number(seconds - 60) }),
            ("no cid", try confirmToken(realmKey) { $0["cid"] = nil }),
            ("signed by a stranger", try confirmToken(try SigningKey.generate(.es256))),
            ("unknown kid", try confirmToken(realmKey, kid: "realm-2")),
        ]
        for (reason, token) in refusals {
            do {
                _ = try await client.challengeId(fromConfirmToken: token)
                XCTFail("accepted: \(reason)")
            } catch let error as KeywardKitError {
                guard case .untrustedToken = error else { return XCTFail("\(reason): \(error)") }
            }
        }
    }
}
