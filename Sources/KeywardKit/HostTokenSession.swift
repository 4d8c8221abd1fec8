// Keyward access tokens for the host app's user: host tokens exchanged, kept, refreshed and retried on 401.
import Foundation
import KeywardJOSE
import KeywardWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Keyward access tokens for the user the host app's own auth provider vouches for (host-signed tokens).
///
/// The session asks the app's ``TokenSigner`` (or ``AsyncTokenSigner``) for a signed JWT, pre-validates it
/// (``HostToken``), and exchanges it at the realm's token endpoint with the JWT bearer grant (RFC 7523 §2.1) and a
/// DPoP proof; the answer is an access token bound to the ``DPoPSigner``'s key (RFC 9449) with no refresh token.
/// It keeps that token and asks the signer for a new host token, and exchanges again, when the token is within
/// ``Options/refreshMargin`` of its expiry. ``send(_:_:body:contentType:)`` calls a DPoP-protected resource and,
/// when the resource answers 401, gets one fresh token and tries once more.
///
/// Callers that need a token at the same time share one exchange: the session is an actor and the first caller's
/// exchange is awaited by the others.
public actor HostTokenSession {
    /// How the session treats tokens and the signer.
    public struct Options: Sendable {
        /// A token is replaced when it has less than this many seconds left. When a token lives less than twice
        /// the margin, half its lifetime is used instead, so a short-lived token is still used for a while.
        public var refreshMargin: TimeInterval
        /// The clock skew tolerated on a host token's `exp` by pre-validation (``HostToken``).
        public var leeway: TimeInterval
        /// How long the signer may take to answer before the request fails with
        /// ``KeywardKitError/signerTimedOut(after:)``.
        public var signerTimeout: Duration

        /// The defaults: a 60-second refresh margin, ``HostToken/defaultLeeway``, and 30 seconds for the signer
        /// (it usually makes a network call to the app's auth provider).
        public init(refreshMargin: TimeInterval = 60, leeway: TimeInterval = HostToken.defaultLeeway, signerTimeout: Duration = .seconds(30)) {
            self.refreshMargin = refreshMargin
            self.leeway = leeway
            self.signerTimeout = signerTimeout
        }
    }

    private enum Signer {
        case callback(any TokenSigner)
        case async(any AsyncTokenSigner)
    }

    private struct CachedToken {
        let value: String
        /// When the token is to be replaced: its expiry less the margin.
        let refreshAt: Date
    }

    /// The realm's issuer URL, `https://HOST/realms/NAME`, without a trailing slash.
    public nonisolated var issuer: String { endpoint.issuer }
    /// The realm's public client the exchanges name (`client_id`); it has no secret.
    public nonisolated let clientId: String
    /// Signs the DPoP proofs; every access token is bound to its key.
    public nonisolated var dpop: DPoPSigner { endpoint.signer }
    /// The options the session was made with.
    public nonisolated let options: Options
    /// The realm's token endpoint, `{issuer}/protocol/openid-connect/token`.
    public nonisolated var tokenEndpoint: String { endpoint.url }

    private nonisolated let endpoint: DPoPTokenEndpoint
    private let signer: Signer
    private let clock: @Sendable () -> Date
    private var cached: CachedToken?
    private var exchange: Task<CachedToken, any Error>?

    /// A session for the realm at `issuer` (a trailing slash is dropped) and its public client `clientId`, getting
    /// host tokens from `signer` — an existing callback signer, handed over to the session. `clock` gives "now"
    /// for token expiry and pre-validation (tests pass one they move); `session` carries the requests.
    public init(
        issuer: String, clientId: String, signer: sending any TokenSigner, dpop: DPoPSigner, options: Options = Options(),
        session: URLSession = .shared, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.endpoint = DPoPTokenEndpoint(issuer: issuer, signer: dpop, session: session)
        self.clientId = clientId
        self.signer = .callback(signer)
        self.options = options
        self.clock = clock
    }

    /// The same, getting host tokens from an ``AsyncTokenSigner``.
    public init(
        issuer: String, clientId: String, signer: any AsyncTokenSigner, dpop: DPoPSigner, options: Options = Options(),
        session: URLSession = .shared, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.endpoint = DPoPTokenEndpoint(issuer: issuer, signer: dpop, session: session)
        self.clientId = clientId
        self.signer = .async(signer)
        self.options = options
        self.clock = clock
    }

    /// A DPoP-bound access token: the one kept, unless it is within the refresh margin of its expiry, in which case
    /// a new host token is asked for and exchanged.
    ///
    /// Throws ``KeywardKitError/invalidHostToken(_:)`` when the signer's token fails pre-validation (nothing is
    /// sent), ``KeywardKitError/exchangeRefused(status:code:reason:description:)`` when Keyward refuses it,
    /// ``KeywardKitError/signerTimedOut(after:)`` when the signer does not answer, and the signer's own error
    /// when it fails. The exchange is shared by every caller waiting for it, so cancelling one caller does not
    /// cancel it; the wait is bounded by the signer timeout and the URL session's request timeout.
    public func accessToken() async throws -> String {
        if let cached, clock() < cached.refreshAt { return cached.value }
        return try await freshToken().value
    }

    /// Forgets the kept token; the next call exchanges a new host token.
    public func invalidate() {
        cached = nil
    }

    /// Sends `method url` with the access token (`Authorization: DPoP`) and a fresh proof carrying `ath`.
    ///
    /// A 401 answer means the resource no longer takes the token (by the server's clock it has expired, or the
    /// server stopped accepting it): the session exchanges a new host token and sends the request once more, and
    /// returns that second answer whatever it is. A token another caller refreshed in the meantime is used without
    /// a new exchange.
    public func send(_ method: String, _ url: String, body: Data? = nil, contentType: String? = nil) async throws -> (Data, HTTPURLResponse) {
        let token = try await accessToken()
        let first = try await endpoint.send(method, url, accessToken: token, body: body, contentType: contentType)
        guard first.1.statusCode == 401 else { return first }
        if cached?.value == token { cached = nil }
        let fresh = try await accessToken()
        return try await endpoint.send(method, url, accessToken: fresh, body: body, contentType: contentType)
    }

    /// The exchange under way, or a new one: concurrent callers await the same task.
    private func freshToken() async throws -> CachedToken {
        if let exchange { return try await exchange.value }
        // Assigned before the task can run: it needs this actor, which this call holds until its first await.
        let task = Task { try await self.runExchange() }
        exchange = task
        return try await task.value
    }

    private func runExchange() async throws -> CachedToken {
        defer { exchange = nil }
        let token = try await exchangeNewHostToken()
        cached = token
        return token
    }

    private func exchangeNewHostToken() async throws -> CachedToken {
        let requestedAt = clock()
        let hostToken = try HostToken(try await signedHostToken(), now: clock(), leeway: options.leeway)
        let form = [
            (name: "grant_type", value: "urn:ietf:params:oauth:grant-type:jwt-bearer"),
            ("assertion", hostToken.compact),
            ("client_id", clientId),
        ]
        switch try await endpoint.requestToken(form) {
        case .refused(let status, let body):
            throw KeywardKitError.exchangeRefused(status: status, code: body?.error.rawValue, reason: body?.reason, description: body?.errorDescription)
        case .issued(let response):
            // RFC 9449 §5: a token bound to the proof key says so; a bearer token would not be taken with DPoP.
            guard response.tokenType.caseInsensitiveCompare("DPoP") == .orderedSame else {
                throw KeywardKitError.unexpectedResponse("the exchange returned a \(response.tokenType) token, not a DPoP-bound one")
            }
            let lifetime = TimeInterval(max(response.expiresIn, 0))
            let margin = min(options.refreshMargin, lifetime / 2)
            // Counted from before the request, so the kept expiry is never later than the server's.
            return CachedToken(value: response.accessToken, refreshAt: requestedAt.addingTimeInterval(lifetime - margin))
        }
    }

    /// A new host token from the signer, awaited under the signer timeout (`SignerCall`).
    private func signedHostToken() async throws -> String {
        switch signer {
        case .callback(let signer):
            return try await SignerCall.asking(signer).value(timeout: options.signerTimeout)
        case .async(let signer):
            let call = SignerCall()
            let work = Task {
                do {
                    call.finish(.success(try await signer.signedToken()))
                } catch {
                    call.finish(.failure(error))
                }
            }
            defer { work.cancel() }
            return try await call.value(timeout: options.signerTimeout)
        }
    }
}
