// Test support: a phone driving the real push-MFA device API in-process, as the original's demo clients do.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
import KeywardServer
import NIOCore
import XCTest

/// A phone as the original's demo clients behave (docs/PUSH-MFA-PROTOCOL.md §10), driving the real push-MFA device API through
/// the in-process router client. Every request is built from scratch so tests can bend any part of it.
struct TestDevice: Sendable {
    let server: TestServer
    var key: SigningKey
    let userId: String
    let deviceId: String
    let credentialId: String
    var realm = "demo"

    init(server: TestServer, userId: String, algorithm: JWSAlgorithm = .rs256, deviceId: String = UUID().uuidString, credentialId: String = UUID().uuidString) throws {
        self.server = server
        self.key = try SigningKey.generate(algorithm)
        self.userId = userId
        self.deviceId = deviceId
        self.credentialId = credentialId
    }

    var base: String { TestServer.publicURL + "/realms/\(realm)/push-mfa" }

    /// Write EC coordinates as minimal big-endian integers (leading zero bytes dropped), as the Keycloak
    /// extension's demo clients do.
    var minimalCoordinates = false

    /// The key's public members as this device writes them, in its proofs and its enrollment.
    var wireJWK: JSONObject {
        var jwk = key.publicJWK.requiredMembers
        if minimalCoordinates {
            for member in ["x", "y"] {
                guard let text = jwk[member]?.stringValue, let bytes = try? Base64URL.decode(text) else { continue }
                jwk[member] = .string(Base64URL.encode(Array(bytes.drop { $0 == 0 })))
            }
        }
        return jwk
    }

    /// The public JWK as the demo clients send it: with alg, use and kid.
    var publicJWK: JSONObject {
        var jwk = wireJWK
        jwk["alg"] = .string(key.algorithm.rawValue)
        jwk["use"] = "sig"
        jwk["kid"] = .string(key.publicJWK.thumbprint())
        return jwk
    }

    /// The device-signed enrollment JWT answering `enrollmentToken`; `overrides` replace or (with .null) remove claims.
    func enrollmentJWT(for enrollmentToken: String, overrides: JSONObject = [:], signWith signer: SigningKey? = nil) throws -> String {
        let challenge = try JWS.parse(enrollmentToken).claims()
        var claims: JSONObject = [
            "enrollmentId": challenge["enrollmentId"] ?? .null,
            "nonce": challenge["nonce"] ?? .null,
            "sub": .string(userId),
            "deviceType": "android",
            "pushProviderId": .string("fcm-token-" + deviceId),
            "pushProviderType": "log",
            "credentialId": .string(credentialId),
            "deviceId": .string(deviceId),
            "deviceLabel": "Test phone",
            "exp": .number((server.clock.now().timeIntervalSince1970 + 300).rounded(.down)),
            "cnf": .object(["jwk": .object(publicJWK)]),
        ]
        for (name, value) in overrides {
            if case .null = value { claims[name] = nil } else { claims[name] = value }
        }
        return try JWS.sign(header: ["typ": "JWT", "kid": .string(key.publicJWK.thumbprint())], claims: claims, key: signer ?? key)
    }

    /// A DPoP proof with the extension's `sub` + `deviceId` claims.
    func proof(method: String, url: String, accessToken: String? = nil, extraClaims: JSONObject = [:], signWith signer: SigningKey? = nil, issuedAt: Date? = nil) throws -> String {
        var claims: JSONObject = ["sub": .string(userId), "deviceId": .string(deviceId)]
        for (name, value) in extraClaims {
            if case .null = value { claims[name] = nil } else { claims[name] = value }
        }
        return try DPoPProof.make(
            key: signer ?? key, method: method, url: url, issuedAt: issuedAt ?? server.clock.now(), accessToken: accessToken, extraClaims: claims,
            extraHeader: signer == nil ? ["jwk": .object(wireJWK)] : [:]
        )
    }

    /// A DPoP-bound token for this device's key from the demo client.
    func accessToken(_ client: any TestClientProtocol) async throws -> String {
        let answer = try await client.requestToken(proofs: [try proof(method: "POST", url: server.tokenURL)])
        XCTAssertEqual(answer.status, .ok, "token request refused: \(answer.json)")
        return try XCTUnwrap(answer.json["access_token"]?.stringValue)
    }

    /// POST /enroll/complete. `dpop`: send Authorization + DPoP signed by the enrolling key (else no auth headers).
    func enroll(_ client: any TestClientProtocol, enrollmentToken: String, dpop: Bool = false, overrides: JSONObject = [:]) async throws -> PushAnswer {
        var headers = HTTPFields()
        if dpop {
            let token = try await accessToken(client)
            headers[.authorization] = "DPoP " + token
            headers[HTTPField.Name("DPoP")!] = try proof(method: "POST", url: base + "/enroll/complete", accessToken: token)
        }
        return try await client.push("/enroll/complete", method: .post, headers: headers, json: ["token": .string(try enrollmentJWT(for: enrollmentToken, overrides: overrides))], realm: realm)
    }

    /// An authenticated device call: `Authorization: DPoP <token>` and a fresh proof with `ath`.
    func call(_ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ path: String, token: String, json: JSONObject? = nil, rawBody: String? = nil) async throws -> PushAnswer {
        let url = base + (path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path)
        let headers: HTTPFields = [
            .authorization: "DPoP " + token,
            HTTPField.Name("DPoP")!: try proof(method: method.rawValue, url: url, accessToken: token),
        ]
        return try await client.push(path, method: method, headers: headers, json: json, rawBody: rawBody, realm: realm)
    }

    /// The device-signed login token for `/respond`.
    func loginJWT(challengeId: String, action: String? = "approve", userVerification: JSONValue? = nil, overrides: JSONObject = [:], signWith signer: SigningKey? = nil) throws -> String {
        var claims: JSONObject = [
            "cid": .string(challengeId), "credId": .string(credentialId), "deviceId": .string(deviceId),
            "exp": .number((server.clock.now().timeIntervalSince1970 + 120).rounded(.down)),
        ]
        if let action { claims["action"] = .string(action) }
        if let userVerification { claims["userVerification"] = userVerification }
        for (name, value) in overrides {
            if case .null = value { claims[name] = nil } else { claims[name] = value }
        }
        return try JWS.sign(header: ["typ": "JWT", "kid": .string(key.publicJWK.thumbprint())], claims: claims, key: signer ?? key)
    }

    func respond(_ client: any TestClientProtocol, token: String, challengeId: String, action: String? = "approve", userVerification: JSONValue? = nil) async throws -> PushAnswer {
        let jwt = try loginJWT(challengeId: challengeId, action: action, userVerification: userVerification)
        return try await call(client, .post, "/login/challenges/\(challengeId)/respond", token: token, json: ["token": .string(jwt)])
    }

    func pending(_ client: any TestClientProtocol, token: String) async throws -> PushAnswer {
        try await call(client, .get, "/login/pending?userId=\(userId)", token: token)
    }
}

/// Status, JSON body and headers of a push-MFA API answer.
struct PushAnswer: Sendable {
    let status: HTTPResponse.Status
    let json: JSONObject
    let headers: HTTPFields
    let body: String

    var error: String? { json["error"]?.stringValue }
}

extension TestClientProtocol {
    func push(_ path: String, method: HTTPRequest.Method, headers: HTTPFields = [:], json: JSONObject? = nil, rawBody: String? = nil, realm: String = "demo") async throws -> PushAnswer {
        var headers = headers
        var body: ByteBuffer?
        if let json {
            body = ByteBuffer(bytes: StrictJSON.serialize(json))
            headers[.contentType] = "application/json"
        } else if let rawBody {
            body = ByteBuffer(string: rawBody)
            headers[.contentType] = "application/json"
        }
        return try await execute(uri: "/realms/\(realm)/push-mfa" + path, method: method, headers: headers, body: body) { response in
            let text = String(buffer: response.body)
            return PushAnswer(status: response.status, json: (try? StrictJSON.parseObject(Array(text.utf8))) ?? [:], headers: response.headers, body: text)
        }
    }
}

extension TestServer {
    /// The demo user `test`.
    func demoUser() async throws -> User {
        let user = try await runtime.accounts.users.user(realm: "demo", username: "test")
        return try XCTUnwrap(user)
    }

    /// The demo realm.
    func demoRealm() async throws -> Realm {
        let realm = try await runtime.oauth.realms.realm(named: "demo")
        return try XCTUnwrap(realm)
    }

    /// A fresh enrollment for `user`.
    func startEnrollment(_ user: User) async throws -> EnrollmentStart {
        try await runtime.pushMFA.service.startEnrollment(realm: "demo", user: user)
    }

    /// A device enrolled for the demo user (without DPoP, like the original's demo clients) and its access token.
    func enrolledDevice(_ client: any TestClientProtocol, algorithm: JWSAlgorithm = .rs256) async throws -> (TestDevice, String) {
        let user = try await demoUser()
        let device = try TestDevice(server: self, userId: user.id, algorithm: algorithm)
        let enrollment = try await startEnrollment(user)
        let answer = try await device.enroll(client, enrollmentToken: enrollment.enrollmentToken)
        XCTAssertEqual(answer.status, .ok, "enrollment refused: \(answer.body)")
        return (device, try await device.accessToken(client))
    }

    /// A login challenge for the demo user from browser session `session`.
    func startLogin(session: String = "browser-1") async throws -> LoginChallengeStart {
        try await runtime.pushMFA.service.startLogin(realm: try await demoRealm(), user: try await demoUser(), clientId: "test-app", sessionId: session)
    }

    func createdChallenge(session: String = "browser-1") async throws -> (PushChallenge, String) {
        guard case .created(let challenge, let watchSecret, _, _) = try await startLogin(session: session) else {
            XCTFail("no challenge was created")
            throw CancellationError()
        }
        return (challenge, watchSecret)
    }

    func settings(_ change: (inout PushMFASettings) throws -> Void) async throws {
        var settings = try await runtime.pushMFA.service.settings(realm: "demo")
        try change(&settings)
        try await runtime.pushMFA.service.saveSettings(settings, realm: "demo")
    }
}
