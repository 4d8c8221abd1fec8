// The device side of push MFA: enrolling, getting tokens, answering login challenges, key rotation, lockout.
import Foundation
import KeywardJOSE
import KeywardWire
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The device side of push MFA against Keyward (or the Keycloak extension it is compatible with): enroll from a
/// link, get DPoP-bound tokens, list and answer login challenges, rotate the key, update the push provider, lock out.
public final class PushMFAClient: Sendable {
    /// What the device remembers about its enrollment; save it again whenever a call returns a changed one.
    public let state: DeviceState
    /// The device key: a `SigningKey` from `FileKeyStore`, a Secure Enclave key from `KeychainKeyStore`, or any signer.
    public let key: any JWSSigner
    /// Where the device's access tokens come from.
    public let tokenSource: PushMFATokenSource
    let session: URLSession
    let clock: @Sendable () -> Date
    private let cachedToken = Mutex<(token: String, expiresAt: Date)?>(nil)

    /// A client for an enrolled device: its saved `state`, its key from the ``KeyStore``, and the OAuth client
    /// (`clientId`, `clientSecret`) its access tokens come from. `clock` gives the times of proofs and tokens.
    public convenience init(
        state: DeviceState, key: any JWSSigner, clientId: String, clientSecret: String, session: URLSession = .shared,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(state: state, key: key, tokenSource: .clientCredentials(clientId: clientId, clientSecret: clientSecret), session: session, clock: clock)
    }

    /// A client for an enrolled device whose access tokens come from `tokenSource`; every token must be bound to `key`.
    public init(state: DeviceState, key: any JWSSigner, tokenSource: PushMFATokenSource, session: URLSession = .shared, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.state = state
        self.key = key
        self.tokenSource = tokenSource
        self.session = session
        self.clock = clock
    }

    var base: String { state.issuer + "/push-mfa" }

    // MARK: - Enrollment

    /// What the device reports about itself when it enrolls.
    public struct EnrollmentOptions: Sendable {
        /// Free text such as `ios` or `android`.
        public var deviceType = "linux"
        /// The label shown on the user's account page.
        public var deviceLabel = "keyward-device"
        /// The push sender the server should use: `fcm`, `apns`, `log` or `none`.
        public var pushProviderType = "log"
        /// The FCM registration token or APNs device token; when nil, `none` sends none and other types get a
        /// generated id (enough for `log`).
        public var pushProviderId: String?
        /// Send Authorization + DPoP with the enrollment (Keyward accepts both; some realms require it).
        public var useDPoP = true

        /// The defaults: a `linux` device labelled `keyward-device` with the `log` sender, enrolling with DPoP.
        public init() {}
    }

    /// Resolves the link, verifies the enrollment token and enrolls `key`, which the caller made in its `KeyStore`
    /// (`createKey(named:algorithm:)` with a `DeviceKeySpec`'s algorithm). The caller saves the state once this
    /// returns, and deletes the key if it throws.
    public static func enroll(
        link: EnrollmentLink, issuer expectedIssuer: String?, clientId: String, clientSecret: String, key: any JWSSigner,
        options: EnrollmentOptions = EnrollmentOptions(), session: URLSession = .shared, clock: @escaping @Sendable () -> Date = { Date() }
    ) async throws -> PushMFAClient {
        // Before any request: a key the push-MFA API refuses would only fail at the end.
        _ = try DeviceKeySpec(algorithm: key.algorithm)
        let token = try await fetchToken(link, session: session)
        let unverified = try JWS.parse(token).claims()
        guard let issuer = expectedIssuer ?? trustableIssuer(unverified["iss"]?.stringValue) else {
            throw KeywardKitError.untrustedToken("the token's issuer is not https or loopback; pass --issuer")
        }
        let claims = try await RealmTokenVerifier(issuer: issuer, session: session, clock: clock).verifyEnrollmentToken(token)
        guard let userId = claims["sub"]?.stringValue, let enrollmentId = claims["enrollmentId"]?.stringValue,
            let nonce = claims["nonce"]?.stringValue
        else { throw KeywardKitError.untrustedToken("enrollment token lacks sub, enrollmentId or nonce") }

        let deviceId = UUID().uuidString.lowercased()
        let state = DeviceState(
            issuer: issuer, realm: URL(string: issuer)?.lastPathComponent ?? "", userId: userId,
            username: claims["username"]?.stringValue ?? "", credentialId: UUID().uuidString.lowercased(), deviceId: deviceId,
            deviceType: options.deviceType, deviceLabel: options.deviceLabel,
            pushProviderId: options.pushProviderId ?? (options.pushProviderType == "none" ? "" : "keyward-device-\(deviceId)"),
            pushProviderType: options.pushProviderType, keyAlgorithm: key.algorithm.rawValue
        )
        let client = PushMFAClient(state: state, key: key, clientId: clientId, clientSecret: clientSecret, session: session, clock: clock)
        let now = clock().timeIntervalSince1970.rounded(.down)
        let enrollment = try JWS.sign(header: ["typ": "JWT", "kid": .string(key.publicJWK.thumbprint())], claims: [
            "enrollmentId": .string(enrollmentId), "nonce": .string(nonce), "sub": .string(userId),
            "deviceType": .string(state.deviceType), "pushProviderId": .string(state.pushProviderId), "pushProviderType": .string(state.pushProviderType),
            "credentialId": .string(state.credentialId), "deviceId": .string(state.deviceId), "deviceLabel": .string(state.deviceLabel),
            "iat": .number(now), "exp": .number(now + 300), "cnf": .object(["jwk": .object(DeviceKeySpec.publicJWK(of: key))]),
        ], key: key)
        let body = try JSONEncoder().encode(DeviceTokenRequest(token: enrollment))
        let url = client.base + "/enroll/complete"
        if options.useDPoP {
            _ = try await client.authorized("POST", url, body: body)
        } else {
            _ = try await client.plain("POST", url, body: body)
        }
        return client
    }

    static func fetchToken(_ link: EnrollmentLink, session: URLSession) async throws -> String {
        switch link {
        case .token(let token):
            return token
        case .requestURI(let url):
            let (data, response) = try await session.keywardGet(url, accept: "application/jwt")
            guard response.statusCode == 200 else { throw serverError(status: response.statusCode, data: data, response: response) }
            let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard EnrollmentLink.isCompactJWS(token) else { throw KeywardKitError.unexpectedResponse("request_uri \(url) did not return a JWT") }
            return token
        }
    }

    /// The token's own issuer is trusted only over https or on loopback (development).
    static func trustableIssuer(_ value: String?) -> String? {
        guard let value, let url = URL(string: value), let host = url.host else { return nil }
        if url.scheme == "https" { return value }
        return url.scheme == "http" && (host == "127.0.0.1" || host == "localhost" || host == "::1") ? value : nil
    }

    // MARK: - Tokens

    /// A DPoP-bound access token for this device's key: from the token source, or by `client_credentials`, reused
    /// until 30 s before it expires.
    public func accessToken() async throws -> String {
        switch tokenSource {
        case .signIn(let accessToken):
            return try await accessToken()
        case .clientCredentials(let clientId, let clientSecret):
            if let cached = cachedToken.withLock({ $0 }), cached.expiresAt.timeIntervalSince(clock()) > 30 { return cached.token }
            let tokens = TokenClient(issuer: state.issuer, clientId: clientId, clientSecret: clientSecret, signer: DPoPSigner(key: key, clock: clock), session: session)
            let response = try await tokens.clientCredentials(extraProofClaims: proofClaims)
            cachedToken.withLock { $0 = (response.accessToken, clock().addingTimeInterval(TimeInterval(response.expiresIn))) }
            return response.accessToken
        }
    }

    var proofClaims: JSONObject { ["sub": .string(state.userId), "deviceId": .string(state.deviceId)] }

    // MARK: - Challenges

    /// The login challenges waiting for this device's answer, with the user-verification prompt of each; empty
    /// when there are none.
    public func pendingChallenges() async throws -> [PendingChallenge] {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let query = "?userId=" + (state.userId.addingPercentEncoding(withAllowedCharacters: allowed) ?? state.userId)
        let data = try await authorized("GET", base + "/login/pending", query: query)
        return try JSONDecoder().decode(PendingChallengesResponse.self, from: data).challenges
    }

    /// The answer to a login challenge. Denying never needs a user-verification answer.
    public enum Action: String, Sendable { case approve, deny }

    /// Approves or denies; returns the server's status ("approved" / "denied").
    @discardableResult
    public func respond(challengeId: String, action: Action, userVerification: String? = nil) async throws -> String {
        guard challengeId.utf8.count == 36, UUID(uuidString: challengeId) != nil else { throw KeywardKitError.invalidChallengeId(challengeId) }
        let now = clock().timeIntervalSince1970.rounded(.down)
        var claims: JSONObject = [
            "cid": .string(challengeId), "credId": .string(state.credentialId), "deviceId": .string(state.deviceId),
            "action": .string(action.rawValue), "iat": .number(now), "exp": .number(now + 120),
        ]
        if action == .approve, let userVerification { claims["userVerification"] = .string(userVerification) }
        let token = try JWS.sign(header: ["typ": "JWT", "kid": .string(key.publicJWK.thumbprint())], claims: claims, key: key)
        let data = try await authorized("POST", base + "/login/challenges/\(challengeId)/respond", body: try JSONEncoder().encode(DeviceTokenRequest(token: token)))
        return try JSONDecoder().decode(PushMFAStatusResponse.self, from: data).status
    }

    /// The challenge id of a pushed confirm token, after checking it is the realm's and meant for this device.
    public func challengeId(fromConfirmToken token: String) async throws -> String {
        let claims = try await RealmTokenVerifier(issuer: state.issuer, session: session, clock: clock).verifyConfirmToken(token)
        guard claims["credId"]?.stringValue == state.credentialId else { throw KeywardKitError.untrustedToken("the confirm token is for another device") }
        guard let cid = claims["cid"]?.stringValue else { throw KeywardKitError.untrustedToken("the confirm token has no cid") }
        return cid
    }

    // MARK: - Device management

    /// Replaces the key stored under `keyName` with a new `spec` key made by `store`, so that no moment exists in
    /// which the only key the server accepts is not stored: the new key is created under `nextKeyName` before the
    /// server hears of it and promoted over `keyName` after the server's 200. If the server refuses (4xx), the new key
    /// is deleted; if the outcome is unknown (no answer, a 5xx, a promotion that failed), it stays under `nextKeyName`
    /// for the caller to resolve. Returns a client for the new key; the caller saves its state.
    public func rotateKey(to spec: DeviceKeySpec, in store: any KeyStore, keyName: String, nextKeyName: String) async throws -> PushMFAClient {
        precondition(keyName != nextKeyName, "the next key needs a name of its own, or creating it destroys the current key")
        let newKey = try store.createKey(named: nextKeyName, algorithm: spec.algorithm)
        let rotated: PushMFAClient
        do {
            rotated = try await rotateKey(to: newKey)
        } catch {
            // A 4xx means the server looked at the request and did not switch: the new key will never work. A 5xx
            // may come from a proxy that gave up on a rotation the server finished, so that key is kept.
            if case KeywardKitError.server(let status, _, _) = error, (400..<500).contains(status) {
                try? store.deleteKey(named: nextKeyName)
            }
            throw error
        }
        try store.promoteKey(named: nextKeyName, to: keyName)
        return rotated
    }

    /// Replaces the device key: the request is authenticated with the current key and carries a proof of possession
    /// signed by the new one. Store the new key *before* calling this: after the server's 200 only the new key works,
    /// and losing it then means enrolling again. Returns a client for the new key.
    public func rotateKey(to newKey: any JWSSigner) async throws -> PushMFAClient {
        _ = try DeviceKeySpec(algorithm: newKey.algorithm)
        let proof = try JWS.sign(header: ["typ": "keyward-rotation+jwt"], claims: [
            "sub": .string(state.userId), "deviceId": .string(state.deviceId), "previousJkt": .string(key.publicJWK.thumbprint()),
            "iat": .number(clock().timeIntervalSince1970.rounded(.down)), "jti": .string(UUID().uuidString),
        ], key: newKey)
        let body = StrictJSON.serialize(["publicKeyJwk": .object(DeviceKeySpec.publicJWK(of: newKey)), "proofOfPossession": .string(proof)])
        _ = try await authorized("PUT", base + "/device/rotate-key", body: Data(body))
        var rotated = state
        rotated.keyAlgorithm = newKey.algorithm.rawValue
        return PushMFAClient(state: rotated, key: newKey, tokenSource: tokenSource, session: session, clock: clock)
    }

    /// Returns "updated" or "unchanged".
    public func updatePushProvider(id: String, type: String?) async throws -> String {
        let body = try JSONEncoder().encode(PushProviderUpdateRequest(pushProviderId: id, pushProviderType: type))
        let data = try await authorized("PUT", base + "/device/push-provider", body: body)
        return try JSONDecoder().decode(PushMFAStatusResponse.self, from: data).status
    }

    /// The panic button: the account is disabled and every pending login ends.
    public func lockout() async throws {
        _ = try await authorized("POST", base + "/login/lockout")
    }

    // MARK: - HTTP

    /// `Authorization: DPoP <token>` plus a proof with `ath`, `sub` and `deviceId`; `htu` without the query.
    func authorized(_ method: String, _ url: String, query: String = "", body: Data? = nil) async throws -> Data {
        let token = try await accessToken()
        let proof = try DPoPProof.make(key: key, method: method, url: url, issuedAt: clock(), accessToken: token, extraClaims: proofClaims)
        return try await plain(method, url + query, body: body, headers: ["Authorization": "DPoP " + token, "DPoP": proof])
    }

    func plain(_ method: String, _ url: String, body: Data? = nil, headers: [String: String] = [:]) async throws -> Data {
        guard let parsed = URL(string: url) else { throw KeywardKitError.invalidURL(url) }
        var request = URLRequest(url: parsed)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        let (data, http) = try await session.keywardData(for: request)
        guard (200..<300).contains(http.statusCode) else { throw Self.serverError(status: http.statusCode, data: data, response: http) }
        return data
    }

    /// The server's `{"error": …}`; for 401s the detail is in `WWW-Authenticate`.
    static func serverError(status: Int, data: Data, response: HTTPURLResponse?) -> KeywardKitError {
        let message = (try? JSONDecoder().decode(PushMFAErrorBody.self, from: data))?.error
        let detail = status == 401 ? (response?.value(forHTTPHeaderField: "WWW-Authenticate") ?? message) : message
        return .server(status: status, code: nil, description: detail ?? String(decoding: data.prefix(200), as: UTF8.self))
    }
}

/// Where a push-MFA device's DPoP-bound access tokens come from.
public enum PushMFATokenSource: Sendable {
    /// The Keycloak extension's way: `client_credentials` of a confidential client the app carries, bound to the key.
    case clientCredentials(clientId: String, clientSecret: String)
    /// The person's own sign-in on the device key (``AppInstallation``): its access token, refreshed when due.
    case signIn(@Sendable () async throws -> String)
}
