// The app's side of the broker: a delegation for its own session key through the system browser, then tokens.
import Foundation
import KeywardJOSE
import KeywardWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Gets a delegation for the app's session key through the realm's relay (issue 29) and exchanges it for DPoP-bound
/// tokens: ``startRelay()`` gives the URL to open in the system browser (`ASWebAuthenticationSession` on Apple
/// platforms, Custom Tabs on Android; on Linux the caller opens it); the person signs in and consents; the browser
/// comes back to the return address with a one-time code; ``finish(_:callback:)`` takes the hand-off with a proof by
/// the session key, checks the delegation (the realm's signature, this app, this key) and exchanges it.
public actor BrokerClient {
    public struct Configuration: Sendable {
        /// The realm's issuer URL, `https://HOST/realms/NAME`.
        public var issuer: String
        /// A public client of the realm registered with `--broker`.
        public var clientId: String
        /// One of the client's registered redirect URIs, exactly: where the relay sends the browser back.
        public var returnURL: String

        public init(issuer: String, clientId: String, returnURL: String) {
            self.issuer = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
            (self.clientId, self.returnURL) = (clientId, returnURL)
        }
    }

    public nonisolated let configuration: Configuration
    /// The session key: the delegation names it, and every proof is signed with it.
    public nonisolated var sessionKey: DPoPSigner { endpoint.signer }
    private nonisolated let endpoint: DPoPTokenEndpoint
    private let session: URLSession
    private let verifier: RealmTokenVerifier

    public init(configuration: Configuration, sessionKey: DPoPSigner, session: URLSession = .shared, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.endpoint = DPoPTokenEndpoint(issuer: configuration.issuer, signer: sessionKey, session: session)
        self.session = session
        self.verifier = RealmTokenVerifier(issuer: configuration.issuer, session: session, clock: clock)
    }

    /// The relay URL to open, with a fresh nonce for this attempt.
    public nonisolated func startRelay() throws -> BrokerRequest {
        let nonce = Base64URL.encode(SecureRandom.bytes(24))
        let key = Base64URL.encode(StrictJSON.serialize(sessionKey.key.publicJWK.requiredMembers))
        let query = DPoPTokenEndpoint.formBody([
            ("client_id", configuration.clientId), ("nonce", nonce), ("publicKey", key), ("return", configuration.returnURL),
        ])
        let text = configuration.issuer + "/auth/relay?" + query
        guard let url = URL(string: text) else { throw KeywardKitError.invalidURL(text) }
        return BrokerRequest(url: url, nonce: nonce, returnURL: configuration.returnURL)
    }

    /// The code from the URL the browser came back to: the return address exactly, this attempt's nonce, and no error.
    public nonisolated func code(from callback: URL, for request: BrokerRequest) throws -> String {
        let received = callback.absoluteString
        let parts = received.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        guard String(parts[0]) == request.returnURL else {
            throw KeywardKitError.signInMismatch("the answer came to \(parts[0]), not to the return address \(request.returnURL)")
        }
        let fragment = Self.parameters(parts.count > 1 ? String(parts[1]) : "")
        guard fragment["nonce"] == request.nonce else { throw KeywardKitError.signInMismatch("the answer's nonce is not this relay's") }
        if let error = fragment["error"] { throw KeywardKitError.signInRefused(code: error, description: fragment["error_description"]) }
        guard let code = fragment["code"], !code.isEmpty else { throw KeywardKitError.signInMismatch("the answer carries neither a code nor an error") }
        return code
    }

    /// Takes the hand-off, checks the delegation and exchanges it for tokens bound to the session key.
    public func finish(_ request: BrokerRequest, callback: URL) async throws -> BrokerSession {
        let code = try code(from: callback, for: request)
        let taken = try await take(code: code, nonce: request.nonce)
        guard taken.kind == "delegation", taken.clientId == configuration.clientId else {
            throw KeywardKitError.unexpectedResponse("the hand-off is a \(taken.kind) for \(taken.clientId), not a delegation for \(configuration.clientId)")
        }
        let claims = try await verifier.verifyDelegation(taken.value, clientId: configuration.clientId, sessionKey: sessionKey.key.publicJWK)
        let tokens = try await exchange(delegation: taken.value)
        return BrokerSession(
            delegation: taken.value, subject: claims["sub"]?.stringValue ?? "",
            expiresAt: Date(timeIntervalSince1970: claims["exp"]?.numberValue ?? 0), accessToken: tokens.accessToken, tokenType: tokens.tokenType,
            accessTokenExpiresIn: tokens.expiresIn
        )
    }

    /// `POST …/v1/broker/handoff/take` with a proof by the session key: the hand-off, once.
    public func take(code: String, nonce: String) async throws -> HandoffTakeResponse {
        let url = configuration.issuer + "/v1/broker/handoff/take"
        guard let target = URL(string: url) else { throw KeywardKitError.invalidURL(url) }
        var request = URLRequest(url: target)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(try sessionKey.proof(method: "POST", url: url), forHTTPHeaderField: "DPoP")
        request.httpBody = Data(StrictJSON.serialize(["code": .string(code), "nonce": .string(nonce)]))
        let (data, response) = try await session.keywardData(for: request)
        guard response.statusCode == 200 else {
            let body = try? StrictJSON.parseObject(Array(data))
            throw KeywardKitError.server(status: response.statusCode, code: body?["error"]?.stringValue, description: body?["message"]?.stringValue)
        }
        return try JSONDecoder().decode(HandoffTakeResponse.self, from: data)
    }

    /// The delegation at the token endpoint (RFC 7523 jwt-bearer) with a proof by the session key: a DPoP-bound
    /// access token. Call again for a new one while the delegation lasts.
    public func exchange(delegation: String) async throws -> TokenResponse {
        let form = [("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", delegation), ("client_id", configuration.clientId)]
        switch try await endpoint.requestToken(form) {
        case .issued(let token): return token
        case .refused(let status, let body):
            throw KeywardKitError.exchangeRefused(status: status, code: body?.error.rawValue, reason: body?.reason, description: body?.errorDescription)
        }
    }

    /// `a=1&b=2` with each value percent-decoded.
    static func parameters(_ text: String) -> [String: String] {
        var values: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { String($0) }
            let name = parts[0].removingPercentEncoding ?? parts[0]
            if values[name] == nil { values[name] = parts.count > 1 ? (parts[1].replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? parts[1]) : "" }
        }
        return values
    }
}

/// A relay the app opened: the URL, and what checking the answer needs. Codable, so an app stopped while the
/// browser is open can keep it and finish later.
public struct BrokerRequest: Sendable, Codable, Equatable {
    public let url: URL
    public let nonce: String
    public let returnURL: String
}

/// What the broker gave the app: the delegation (keep it: it buys new access tokens until `expiresAt`, with the
/// session key) and the first access token.
public struct BrokerSession: Sendable, Codable, Equatable {
    public let delegation: String
    public let subject: String
    public let expiresAt: Date
    public let accessToken: String
    public let tokenType: String
    public let accessTokenExpiresIn: Int
}
