// Test support: a push-MFA realm answered in-process that records every request a PushMFAClient sends.
import Foundation
import KeywardJOSE
import KeywardKit
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every request the fake realm saw, in order.
final class RequestRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [URLRequest] = []
    func record(_ request: URLRequest) { lock.withLock { seen.append(request) } }
    func requests(_ method: String, _ suffix: String) -> [URLRequest] {
        lock.withLock { seen.filter { $0.httpMethod == method && ($0.url?.absoluteString.hasSuffix(suffix) ?? false) } }
    }
}

/// A push-MFA realm answered in-process (no server): test cases that adopt this enroll a PushMFAClient against it
/// and inspect the requests it sent.
protocol FakePushRealm {}

extension FakePushRealm {
    typealias Recorder = RequestRecorder

    var issuer: String { "https://id.example.com/realms/demo" }
    var now: Date { Date(timeIntervalSince1970: 1_900_000_000) }
    /// Standard base64 without padding, as the server makes it: `+` and `/` must survive untouched.
    var nonce: String { "q+9/Zk1uV2x0b2tlbi1ub25jZS13aXRoLXBsdXMv+/A" }

    /// A realm at `issuer`: JWKS, token endpoint, and the push-MFA endpoints answering success (rotation with
    /// `rotationStatus`).
    func fakeRealm(realmKey: SigningKey, recorder: Recorder, rotationStatus: Int = 200) -> URLSession {
        var published = realmKey.publicJWK.jsonObject
        published["kid"] = "realm-1"
        let jwks = Data(StrictJSON.serialize(["keys": .array([.object(published)])]))
        return StubURLProtocol.session { request in
            recorder.record(request)
            let path = request.url?.path ?? ""
            let json = ["Content-Type": "application/json"]
            if path.hasSuffix("/protocol/openid-connect/certs") { return (200, json, jwks) }
            if path.hasSuffix("/protocol/openid-connect/token") {
                return (200, json, Data(#"{"access_token":"at-1","token_type":"DPoP","expires_in":300}"#.utf8))
            }
            if path.hasSuffix("/enroll/complete") { return (200, json, Data(#"{"status":"enrolled"}"#.utf8)) }
            if path.hasSuffix("/device/rotate-key") {
                if rotationStatus != 200 { return (rotationStatus, json, Data(#"{"error":"refused"}"#.utf8)) }
                return (200, json, Data(#"{"status":"rotated"}"#.utf8))
            }
            if path.hasSuffix("/respond") { return (200, json, Data(#"{"status":"approved"}"#.utf8)) }
            return (404, json, Data(#"{"error":"not found"}"#.utf8))
        }
    }

    func enrollmentToken(_ realmKey: SigningKey) throws -> String {
        let seconds = now.timeIntervalSince1970
        return try JWS.sign(header: ["kid": "realm-1", "typ": "JWT"], claims: [
            "iss": .string(issuer), "aud": "demo", "sub": "user-1", "username": "test", "realm": "demo",
            "enrollmentId": "4c8d7d0e-3a55-4f7e-9d7a-1b2c3d4e5f60", "nonce": .string(nonce), "typ": "push-enroll-challenge",
            "iat": .number(seconds), "exp": .number(seconds + 240),
        ], key: realmKey)
    }

    static func body(_ request: URLRequest) throws -> JSONObject {
        if let data = request.httpBody { return try StrictJSON.parseObject(Array(data)) }
        // URLProtocol may see the body as a stream.
        let stream = try XCTUnwrap(request.httpBodyStream)
        stream.open()
        defer { stream.close() }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count <= 0 { break }
            bytes += buffer[..<count]
        }
        return try StrictJSON.parseObject(bytes)
    }

    /// Verifies `compact` with `key` and returns header and claims.
    func verified(_ compact: String, key: JWK, type: String? = nil) throws -> VerifiedJWT {
        try JWTVerifier.verify(compact, policy: JWTVerificationPolicy(
            allowedAlgorithms: Set(JWSAlgorithm.allCases), keys: .single(key), expectedType: type, requiredClaims: []
        ), now: now)
    }

    /// Enrolls `key` with the realm; every request lands in `recorder`.
    func enroll(_ recorder: Recorder, key: any JWSSigner, rotationStatus: Int = 200) async throws -> PushMFAClient {
        let realmKey = try SigningKey.generate(.es256)
        let session = fakeRealm(realmKey: realmKey, recorder: recorder, rotationStatus: rotationStatus)
        var options = PushMFAClient.EnrollmentOptions()
        options.deviceLabel = "Test laptop"
        options.pushProviderId = "push-token-1"
        let now = now
        return try await PushMFAClient.enroll(
            link: .token(try enrollmentToken(realmKey)), issuer: issuer, clientId: "push-device-client", clientSecret: "secret",
            key: key, options: options, session: session, clock: { now }
        )
    }
}
